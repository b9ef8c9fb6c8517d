#include "cache/build_lock.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/signal_paths.hpp"
#include "util/stale_retry.hpp"
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
    std::string scope;  ///< process_scope() of the holder; empty from earlier versions
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

struct CreateResult {
    Creation creation;
    int error = 0;  ///< errno, when unavailable
};

// When this builder process started (its first lock): the same in all its
// locks, so that a holder found gone at one lock is known at its others.
const std::string& process_started()
{
    static const std::string started = util::utc_now();
    return started;
}

std::string holder_json(const std::string& token)
{
    nlohmann::json holder = {{"host", host_name()},
                             {"scope", process_scope()},
                             {"pid", static_cast<long>(::getpid())},
                             {"started", process_started()},
                             {"token", token}};
    return util::json_text(holder) + "\n";
}

// A file being written, or of another version, says nothing usable.
std::optional<Holder> parse_holder(const std::string& content)
{
    try {
        auto json = util::parse_json(content);
        return Holder{json.at("host").get<std::string>(), json.value("scope", std::string()),
                      json.at("pid").get<long>(), json.at("started").get<std::string>(),
                      json.at("token").get<std::string>()};
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

// Creates the lock file. A create that fails with ESTALE (the shard folder
// replaced on another node) is tried again by name, as reads are.
CreateResult try_create(const fs::path& file, const std::string& token)
{
    const util::StaleRetry retry;
    auto pause = retry.first_pause;
    for (int attempt = 0; attempt < retry.tries; ++attempt) {
        int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0) {
            try {
                util::write_all(fd, holder_json(token), file);
                ::close(fd);
                return {Creation::created};
            } catch (const CacheError&) {
                int error = errno;
                ::close(fd);
                ::unlink(file.c_str());
                return {Creation::unavailable, error};
            }
        }
        int error = errno;
        if (error == EEXIST) return {Creation::exists};
        if (error == ENOENT) {
            std::error_code ignored;
            fs::create_directories(file.parent_path(), ignored);  // the entry's shard does not exist yet
        } else if (error == ESTALE) {
            std::this_thread::sleep_for(pause);
            pause *= 2;
        } else {
            return {Creation::unavailable, error};
        }
    }
    return {Creation::unavailable, ESTALE};
}

// Whether a lock that could not be created is worth a warning: a read-only
// cache is the build's own error already.
bool worth_a_warning(int error) { return error != EROFS && error != EACCES && error != EPERM; }

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

enum class Break { broken, changed, not_our_turn };

fs::path turn_of(const fs::path& file)
{
    fs::path turn = file;
    turn += ".breaking";
    return turn;
}

// Breakers of one lock take turns through a second one, `<lock>.breaking`:
// under it the lock is looked at again and removed only if it still is the
// stale one, so a lock another waiter has just taken is never touched.
// (Moving the lock aside to compare it, and linking a fresh one back, left a
// gap in which a third waiter's create won: two holders, one key compiled
// twice; tests/netfs/run.sh, issue 45.)
Break break_lock(const fs::path& file, const std::string& stale_content)
{
    fs::path turn = turn_of(file);
    int fd = ::open(turn.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return Break::not_our_turn;
    ::close(fd);
    auto now = look_at(file);
    bool stale = now && now->content == stale_content;
    if (stale) ::unlink(file.c_str());
    ::unlink(turn.c_str());
    return stale ? Break::broken : Break::changed;
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
    return (holder.scope.empty() ? holder.host : holder.scope) + ":" + std::to_string(holder.pid) + "@" +
           holder.started;
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

bool is_lock_leftover(const fs::path& path)
{
    std::string name = path.filename().string();
    return is_lock_file(path) && !name.ends_with(".lock");
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
    // Under a second, holders would touch their locks every few milliseconds
    // and waiters break locks whose holder merely paused: no file system's
    // timestamps and attribute caches keep up with that.
    if (error != std::errc() || end != value.data() + value.size() || !(seconds >= 1) || seconds > week)
        throw UsageError(std::string("CUNUMPY_KERNELS_LOCK_TIMEOUT=") + text +
                         ": give the seconds after which an untouched build lock is broken, a decimal number from 1"
                         " to 604800 (a week)");
    timing.stale_after = std::chrono::milliseconds(std::llround(seconds * 1000));
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
    // Since when another breaker's turn has stood: a turn its breaker left
    // behind (killed within those few calls) is cleared after a timeout, as
    // seen on this waiter's clock (a file time would trust other nodes' clocks).
    bool turn_standing = false;
    auto turn_seen_since = begin;
    for (;;) {
        if (published()) return nullptr;
        std::string token = unique_temporary_name();
        CreateResult created = try_create(file, token);
        switch (created.creation) {
            case Creation::created: {
                auto lock = std::unique_ptr<BuildLock>(new BuildLock(file, token, timing, events));
                // The holder before may have published and let go between the
                // look above and the create; look once more, past cached names.
                list_folder(file.parent_path());
                if (published()) return nullptr;
                return lock;
            }
            case Creation::unavailable:
                if (events.broken && worth_a_warning(created.error))
                    events.broken("cannot create the build lock " + file.string() + ": " +
                                  util::errno_message(created.error) + "; building " + what_of(file, events) +
                                  " without it, so another builder may compile it too");
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
        // Only a holder of this scope can be found gone by its id: another
        // PID namespace or machine may give the same name (process_scope).
        bool gone = holder && holder->scope == process_scope() && process_gone(holder->pid);
        bool known_gone = holder && events.gone && events.gone->contains(identity_of(*holder));
        if (gone || known_gone || now - seen_since >= timing.stale_after) {
            std::string why = gone         ? "its process is gone"
                              : known_gone ? "it was found gone at another lock"
                                           : "untouched for " + seconds_text(timing.stale_after) + " s";
            if (holder && events.gone) events.gone->add(identity_of(*holder));
            Break outcome = break_lock(file, sighting->content);
            if (outcome == Break::broken) {
                if (events.broken)
                    events.broken("broke the build lock " + file.string() + " of " + describe(*sighting) + ": " + why);
                seen.reset();
                turn_standing = false;
                continue;
            }
            // Another waiter's turn to break it, or the lock changed: look again after the pause.
            if (outcome == Break::changed) {
                turn_standing = false;
            } else if (!turn_standing) {
                turn_standing = true;
                turn_seen_since = now;
            } else if (now - turn_seen_since >= timing.stale_after) {
                ::unlink(turn_of(file).c_str());
                turn_standing = false;
            }
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

BuildLock::BuildLock(fs::path file, std::string token, const LockTiming& timing, const LockEvents& events)
    : file_(std::move(file)),
      token_(std::move(token)),
      what_(what_of(file_, events)),
      lost_(events.broken),
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
    if (holder && holder->token == token_)
        ::unlink(file_.c_str());
    else if (lost_)
        try {
            lost_("this builder's lock " + file_.string() + " was broken while it stalled" +
                  (sighting ? " (" + describe(*sighting) + " holds it now)" : std::string()) + ": " + what_ +
                  " may have been compiled twice");
        } catch (...) {
            // A warning that cannot be given loses nothing.
        }
    held_locks.remove(signal_slot_);
}

bool BuildLock::held() const { return !token_.empty(); }

}  // namespace ck
