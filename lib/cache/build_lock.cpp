#include "cache/build_lock.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/signal_paths.hpp"
#include "util/temporary_name.hpp"
#include "util/utc_time.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string_view>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

namespace ck {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Holder {
    std::string host;
    long pid = 0;
    std::string started;
    std::string token;
};

// A look at the lock file: what it says and when it was last touched.
struct Sighting {
    std::string content;
    timespec modified{};
};

enum class Creation { created, exists, unavailable };

std::string holder_json(const std::string& token)
{
    nlohmann::json holder = {
        {"host", host_name()}, {"pid", static_cast<long>(::getpid())}, {"started", util::utc_now()}, {"token", token}};
    return util::json_text(holder) + "\n";
}

// A file being written, or of another version, says nothing usable.
std::optional<Holder> parse_holder(const std::string& content)
{
    try {
        auto json = util::parse_json(content);
        return Holder{json.at("host").get<std::string>(), json.at("pid").get<long>(),
                      json.at("started").get<std::string>(), json.at("token").get<std::string>()};
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

std::optional<Sighting> look_at(const fs::path& file)
{
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0) return std::nullopt;
    try {
        return Sighting{util::read_file(file), info.st_mtim};
    } catch (const SourceError&) {
        return std::nullopt;  // released between the stat and the read
    } catch (const TransientReadError&) {
        return std::nullopt;  // replaced or removed by another node, which reads as released: look again
    }
}

bool same(const Sighting& a, const Sighting& b)
{
    return a.content == b.content && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec;
}

Creation try_create(const fs::path& file, const std::string& token)
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0) {
            try {
                util::write_all(fd, holder_json(token), file);
                ::close(fd);
                return Creation::created;
            } catch (const CacheError&) {
                ::close(fd);
                ::unlink(file.c_str());
                return Creation::unavailable;
            }
        }
        if (errno == EEXIST) return Creation::exists;
        if (errno != ENOENT) return Creation::unavailable;
        std::error_code ignored;
        fs::create_directories(file.parent_path(), ignored);  // the entry's shard does not exist yet
    }
    return Creation::unavailable;
}

// Listing a folder asks the server for its names (READDIRPLUS on FUSE and
// NFS clients), which replaces names cached as missing; an open by name is
// answered from that cache for as long as it lasts (FUSE's negative-timeout,
// NFS's acdirmax): a waiter would miss an entry another node published.
void list_folder(const fs::path& folder)
{
    DIR* listing = ::opendir(folder.c_str());
    if (!listing) return;
    while (::readdir(listing)) {}
    ::closedir(listing);
}

bool process_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Breakers of one lock take turns through a second one, `<lock>.breaking`:
// under it the lock is looked at again and removed only if it still is the
// stale one, so a lock another waiter has just taken is never touched.
// (Moving the lock aside to compare it, and linking a fresh one back, left a
// gap in which a third waiter's create won: two holders, one key compiled
// twice; tests/netfs/run.sh, issue 45.) False when another breaker has the
// turn or the lock changed: the caller looks again.
bool break_lock(const fs::path& file, const std::string& stale_content, Clock::duration stale_after)
{
    fs::path turn = file;
    turn += ".breaking";
    int fd = ::open(turn.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        // A turn outlives its breaker only if that one died within these few
        // calls; one older than a stale lock is cleared for the next try.
        struct stat info {};
        if (errno == EEXIST && ::stat(turn.c_str(), &info) == 0 &&
            std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(info.st_mtime) > stale_after)
            ::unlink(turn.c_str());
        return false;
    }
    ::close(fd);
    auto now = look_at(file);
    bool stale = now && now->content == stale_content;
    if (stale) ::unlink(file.c_str());
    ::unlink(turn.c_str());
    return stale;
}

std::string describe(const Sighting& sighting)
{
    auto holder = parse_holder(sighting.content);
    if (!holder) return "another builder";
    return holder->host + ":" + std::to_string(holder->pid) + " (since " + holder->started + ")";
}

std::string seconds_text(std::chrono::milliseconds duration)
{
    double seconds = duration.count() / 1000.0;
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    return text;
}

// One builder process: its locks share host, pid and start time.
std::string identity_of(const Holder& holder)
{
    return holder.host + ":" + std::to_string(holder.pid) + "@" + holder.started;
}

std::string what_of(const fs::path& file, const LockEvents& events)
{
    return events.what.empty() ? file.stem().string() : events.what;
}

// The lock files this process holds, for remove_held_build_locks().
util::SignalPaths held_locks;

}  // namespace

void GoneHolders::add(const std::string& holder)
{
    std::lock_guard lock(mutex_);
    holders_.insert(holder);
}

bool GoneHolders::contains(const std::string& holder) const
{
    std::lock_guard lock(mutex_);
    return holders_.count(holder) > 0;
}

void remove_held_build_locks() noexcept
{
    // As ~BuildLock: a lock another builder broke while this process was
    // stopped (SIGSTOP, a batch system's suspend) and then took is its own.
    held_locks.for_each([](const char* path, const char* quoted_token) {
        if (util::file_holds(path, quoted_token)) ::unlink(path);
    });
}

struct BuildLock::Refresher {
    Refresher(fs::path file, Clock::duration every) : thread([this, file, every] { run(file, every); }) {}

    ~Refresher()
    {
        {
            std::lock_guard lock(mutex);
            stop = true;
        }
        woken.notify_all();
        thread.join();
    }

    void run(const fs::path& file, Clock::duration every)
    {
        std::unique_lock lock(mutex);
        while (!woken.wait_for(lock, every, [this] { return stop; })) ::utimensat(AT_FDCWD, file.c_str(), nullptr, 0);
    }

    std::mutex mutex;
    std::condition_variable woken;
    bool stop = false;
    std::thread thread;  // last: started once the members it uses exist
};

bool is_lock_file(const fs::path& path)
{
    std::string name = path.filename().string();
    // `.lock.broken.*`: locks moved aside by the breakers of earlier versions.
    return name.size() > 5 && (name.ends_with(".lock") || name.ends_with(".lock.breaking") ||
                               name.find(".lock.broken.") != std::string::npos);
}

LockTiming LockTiming::from_environment()
{
    LockTiming timing;
    const char* text = std::getenv("CUNUMPY_KERNELS_LOCK_TIMEOUT");
    if (!text || !*text) return timing;
    constexpr double week = 7 * 24 * 3600;
    double seconds = 0;
    std::string_view value(text);
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds, std::chars_format::fixed);
    if (error != std::errc() || end != value.data() + value.size() || !(seconds > 0) || seconds > week)
        throw UsageError(std::string("CUNUMPY_KERNELS_LOCK_TIMEOUT=") + text +
                         ": give the seconds after which an untouched build lock is broken, a decimal number above 0"
                         " and at most 604800 (a week)");
    timing.stale_after = std::chrono::milliseconds(std::max<long long>(1, std::llround(seconds * 1000)));
    return timing;
}

fs::path BuildLock::file_of(const fs::path& entry)
{
    fs::path file = entry;
    file += ".lock";
    return file;
}

std::unique_ptr<BuildLock> BuildLock::acquire(const fs::path& file, const std::function<bool()>& published,
                                              const LockTiming& timing, const LockEvents& events)
{
    const auto begin = Clock::now();
    const auto longest_pause = std::min<Clock::duration>(std::chrono::milliseconds(500), timing.stale_after / 20);
    auto pause = std::min<Clock::duration>(std::chrono::milliseconds(10), longest_pause);
    std::optional<Sighting> seen;
    auto seen_since = begin;
    bool told = false;
    for (;;) {
        if (published()) return nullptr;
        std::string token = unique_temporary_name();
        switch (try_create(file, token)) {
            case Creation::created: {
                auto lock = std::unique_ptr<BuildLock>(new BuildLock(file, token, timing));
                // The holder before may have published and let go between the
                // look above and the create; look once more, past cached names.
                list_folder(file.parent_path());
                if (published()) return nullptr;
                return lock;
            }
            case Creation::unavailable:
                return std::unique_ptr<BuildLock>(new BuildLock());
            case Creation::exists:
                break;
        }
        auto sighting = look_at(file);
        if (!sighting) continue;  // released meanwhile: try again at once
        auto now = Clock::now();
        if (!seen || !same(*seen, *sighting)) {
            seen = sighting;
            seen_since = now;
        }
        auto holder = parse_holder(sighting->content);
        bool gone = holder && holder->host == host_name() && process_gone(holder->pid);
        bool known_gone = holder && events.gone && events.gone->contains(identity_of(*holder));
        if (gone || known_gone || now - seen_since >= timing.stale_after) {
            std::string why = gone         ? "its process is gone"
                              : known_gone ? "it was found gone at another lock"
                                           : "untouched for " + seconds_text(timing.stale_after) + " s";
            if (holder && events.gone) events.gone->add(identity_of(*holder));
            if (break_lock(file, sighting->content, timing.stale_after)) {
                if (events.broken)
                    events.broken("broke the build lock " + file.string() + " of " + describe(*sighting) + ": " + why);
                seen.reset();
                continue;
            }
            // Another waiter's turn to break it, or the lock changed: look again after the pause.
        }
        if (now - begin >= timing.longest_wait()) {
            if (events.broken)
                events.broken("waited " + seconds_text(timing.longest_wait()) + " s for " + describe(*sighting) +
                              " to build " + what_of(file, events) + "; building it here too");
            return std::unique_ptr<BuildLock>(new BuildLock());
        }
        if (!told && events.waiting)
            events.waiting("waiting for " + describe(*sighting) + ", which builds " + what_of(file, events) +
                           " (its lock is broken if untouched for " + seconds_text(timing.stale_after) + " s)");
        told = true;
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, longest_pause);
    }
}

BuildLock::BuildLock() = default;

BuildLock::BuildLock(fs::path file, std::string token, const LockTiming& timing)
    : file_(std::move(file)),
      token_(std::move(token)),
      refresher_(std::make_unique<Refresher>(
          file_, std::max<Clock::duration>(timing.refresh(), std::chrono::milliseconds(1)))),
      signal_slot_(held_locks.add(file_, "\"" + token_ + "\""))
{
}

BuildLock::~BuildLock()
{
    if (!held()) return;
    refresher_.reset();
    // A lock broken while this process stalled belongs to another builder now.
    auto sighting = look_at(file_);
    auto holder = sighting ? parse_holder(sighting->content) : std::nullopt;
    if (holder && holder->token == token_) ::unlink(file_.c_str());
    held_locks.remove(signal_slot_);
}

bool BuildLock::held() const { return !token_.empty(); }

}  // namespace ck
