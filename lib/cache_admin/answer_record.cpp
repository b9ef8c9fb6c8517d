#include "cache_admin/answer_record.hpp"

#include "util/checksummed.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"
#include "util/temporary_name.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <unordered_map>

namespace ck {

namespace fs = std::filesystem;

namespace {

// 2: a build's bookkeeping names its counters.
constexpr std::string_view record_format = "cunumpy-kernels/answer-record/2";

// How much of a path's stat an answer may rest on (the header's list).
enum class Role : char {
    missing = 'e',   ///< did not exist or could not be reached: the same error
    permission = 'x',  ///< a permission asked: the same answer (`mode` and `group` hold its mode and flags)
    identity = 'i',  ///< a folder on the way, a link: what it is, not what it holds
    stated = 's',    ///< a folder asked about itself, not listed: what it is, and its times (a probe keys on them)
    listed = 'l',    ///< a folder whose entries were read
    content = 'f',   ///< a regular file
};

struct Witness {
    std::string path;
    Role role = Role::identity;
    int error = 0;
    std::uint64_t device = 0, inode = 0, mode = 0, owner = 0, group = 0, size = 0;
    std::int64_t modified_ns = 0, changed_ns = 0;
    bool asked = false;  ///< asked by the plan, not only passed on the way (not stored)
};

// The path's stat now, links not followed (a link's target is witnessed
// under its own path).
Witness observe(const std::string& path)
{
    Witness w;
    w.path = path;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        w.role = Role::missing;
        w.error = errno;
        return w;
    }
    w.device = st.st_dev;
    w.inode = st.st_ino;
    w.mode = st.st_mode;
    w.owner = st.st_uid;
    w.group = st.st_gid;
    w.size = st.st_size;
    w.modified_ns = util::ns_of(st.st_mtim);
    w.changed_ns = util::ns_of(st.st_ctim);
    return w;
}

// The role a stat supports for a path asked directly (`asked`) or only
// passed on the way to one.
Role role_of(const Witness& w, bool asked, bool listed)
{
    if (w.role == Role::missing) return Role::missing;
    if (!asked || S_ISLNK(w.mode)) return Role::identity;
    if (S_ISREG(w.mode)) return Role::content;
    return S_ISDIR(w.mode) && listed ? Role::listed : Role::stated;
}

Witness permission_witness(const FileAccesses::PermissionCheck& check)
{
    Witness w;
    w.path = check.path;
    w.role = Role::permission;
    w.mode = static_cast<std::uint64_t>(check.mode);
    w.group = static_cast<std::uint64_t>(check.flags);
    w.error = ::faccessat(AT_FDCWD, check.path.c_str(), check.mode, check.flags) == 0 ? 0 : errno;
    return w;
}

bool holds(const Witness& then)
{
    if (then.role == Role::permission) {
        FileAccesses::PermissionCheck check{then.path, static_cast<int>(then.mode), static_cast<int>(then.group)};
        return permission_witness(check).error == then.error;
    }
    Witness now = observe(then.path);
    if (then.role == Role::missing || now.role == Role::missing) return then.role == now.role && then.error == now.error;
    if (now.device != then.device || now.inode != then.inode || now.mode != then.mode || now.owner != then.owner ||
        now.group != then.group)
        return false;
    // The change time too: an archive unpacked over a folder puts the
    // folder's modification time back after adding to it.
    bool times = now.modified_ns == then.modified_ns && now.changed_ns == then.changed_ns;
    if (then.role == Role::listed || then.role == Role::stated) return times;
    if (then.role == Role::content || S_ISLNK(then.mode)) return times && now.size == then.size;
    return true;
}

// Every path asked, every folder on the way to it, and where a path that is
// a link leads: each once, in the strongest role it was asked in. A link
// on the way needs no more than its own witness, since lstat follows it; a
// path that is itself a link is followed here, hop by hop, so that even a
// dangling one has a witness where its target would appear.
class WitnessSet {
public:
    void add(const FileAccesses::Path& asked)
    {
        std::string path = asked.path;
        for (int hop = 0; hop < 40 && add_path(path, asked.listed); ++hop) {  // 40: Linux's limit of links followed
            std::string target = link_target(path);
            if (target.empty()) return;
            path = target[0] == '/' ? target : path.substr(0, path.rfind('/')) + "/" + target;
        }
    }

    std::vector<Witness> take()
    {
        std::vector<Witness> list;
        for (auto& seen : seen_) {
            seen.witness.role = role_of(seen.witness, seen.asked, seen.listed);
            seen.witness.asked = seen.asked;
            list.push_back(std::move(seen.witness));
        }
        return list;
    }

private:
    struct Seen {
        Witness witness;
        bool asked = false, listed = false;
    };

    // Whether `path` itself is a link.
    bool add_path(const std::string& path, bool listed)
    {
        for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
            if (path[slash - 1] != '/') add_one(path.substr(0, slash), false, false);
        return add_one(path, true, listed);
    }

    static std::string link_target(const std::string& link)
    {
        char target[PATH_MAX];
        ssize_t n = ::readlink(link.c_str(), target, sizeof target);
        return n > 0 && static_cast<std::size_t>(n) < sizeof target ? std::string(target, static_cast<std::size_t>(n)) : "";
    }

    bool add_one(const std::string& path, bool asked, bool listed)
    {
        auto [it, added] = index_.try_emplace(path, seen_.size());
        if (added) seen_.push_back({observe(path)});
        Seen& seen = seen_[it->second];
        seen.asked |= asked;
        seen.listed |= listed;
        return seen.witness.role != Role::missing && S_ISLNK(seen.witness.mode);
    }

    std::unordered_map<std::string, std::size_t> index_;
    std::vector<Seen> seen_;
};

// Text fields as `<length>:<bytes>`, numbers in decimal, each followed by one
// separator: read back without a parser's document, in one pass.
class Writer {
public:
    void number(std::int64_t n) { (out_ += std::to_string(n)) += ' '; }
    void text(std::string_view s)
    {
        (out_ += std::to_string(s.size())) += ':';
        (out_ += s) += '\n';
    }
    std::string& bytes() { return out_; }

private:
    std::string out_;
};

class Reader {
public:
    explicit Reader(std::string_view in) : in_(in) {}

    bool number(std::int64_t& n)
    {
        auto [end, error] = std::from_chars(in_.data() + at_, in_.data() + in_.size(), n);
        if (error != std::errc() || end == in_.data() + in_.size() || *end != ' ') return false;
        at_ = end - in_.data() + 1;
        return true;
    }
    template <typename T>
    bool number(T& n)
    {
        std::int64_t v = 0;
        if (!number(v)) return false;
        n = static_cast<T>(v);
        return true;
    }
    bool text(std::string& s)
    {
        std::size_t length = 0;
        auto [end, error] = std::from_chars(in_.data() + at_, in_.data() + in_.size(), length);
        if (error != std::errc() || end == in_.data() + in_.size() || *end != ':') return false;
        std::size_t start = end - in_.data() + 1;
        if (length >= in_.size() - start || in_[start + length] != '\n') return false;
        s.assign(in_.substr(start, length));
        at_ = start + length + 1;
        return true;
    }
    bool done() const { return at_ == in_.size(); }

private:
    std::string_view in_;
    std::size_t at_ = 0;
};

void write_witness(Writer& out, const Witness& w)
{
    out.number(static_cast<char>(w.role));
    for (std::int64_t n : {std::int64_t(w.error), std::int64_t(w.device), std::int64_t(w.inode), std::int64_t(w.mode),
                           std::int64_t(w.owner), std::int64_t(w.group), std::int64_t(w.size), w.modified_ns, w.changed_ns})
        out.number(n);
    out.text(w.path);
}

bool read_witness(Reader& in, Witness& w)
{
    std::int64_t role = 0;
    if (!in.number(role) || (role != 'e' && role != 'i' && role != 's' && role != 'l' && role != 'f' && role != 'x')) return false;
    w.role = static_cast<Role>(role);
    return in.number(w.error) && in.number(w.device) && in.number(w.inode) && in.number(w.mode) &&
           in.number(w.owner) && in.number(w.group) && in.number(w.size) && in.number(w.modified_ns) &&
           in.number(w.changed_ns) && in.text(w.path);
}

std::string encode(const std::string& key, const RecordedAnswer& answer, const FileAccesses& accesses,
                   const std::vector<Witness>& witnesses)
{
    Writer out;
    out.text(key);
    out.number(static_cast<std::int64_t>(accesses.environment.size()));
    for (const auto& [name, value] : accesses.environment) {
        out.text(name);
        out.number(value ? 1 : 0);
        if (value) out.text(*value);
    }
    out.number(static_cast<std::int64_t>(witnesses.size()));
    for (const auto& w : witnesses) write_witness(out, w);
    out.number(static_cast<std::int64_t>(answer.logs.size()));
    for (const auto& [level, message] : answer.logs) {
        out.number(level);
        out.text(message);
    }
    out.text(answer.result);
    out.number(static_cast<std::int64_t>(answer.notes.size()));
    for (const auto& note : answer.notes) out.text(note);
    out.number(answer.exit_code);
    out.number(answer.seconds_at ? static_cast<std::int64_t>(*answer.seconds_at) : -1);
    out.text(answer.bookkeeping);
    return std::move(out.bytes());
}

bool environment_holds(Reader& in)
{
    std::size_t count = 0;
    if (!in.number(count)) return false;
    for (std::size_t i = 0; i < count; ++i) {
        std::string name, value;
        int set = 0;
        if (!in.text(name) || !in.number(set) || (set && !in.text(value))) return false;
        const char* now = std::getenv(name.c_str());
        if (set ? !now || value != now : now != nullptr) return false;
    }
    return true;
}

bool witnesses_hold(Reader& in)
{
    std::size_t count = 0;
    if (!in.number(count)) return false;
    Witness w;
    for (std::size_t i = 0; i < count; ++i)
        if (!read_witness(in, w) || !holds(w)) return false;
    return true;
}

std::optional<RecordedAnswer> decode_answer(Reader& in)
{
    RecordedAnswer answer;
    std::size_t logs = 0, notes = 0;
    if (!in.number(logs)) return std::nullopt;
    for (std::size_t i = 0; i < logs; ++i) {
        auto& [level, message] = answer.logs.emplace_back();
        if (!in.number(level) || !in.text(message)) return std::nullopt;
    }
    if (!in.text(answer.result) || !in.number(notes)) return std::nullopt;
    answer.notes.resize(notes);
    for (auto& note : answer.notes)
        if (!in.text(note)) return std::nullopt;
    std::int64_t seconds_at = -1;
    if (!in.number(answer.exit_code) || !in.number(seconds_at) || !in.text(answer.bookkeeping) || !in.done())
        return std::nullopt;
    if (seconds_at > static_cast<std::int64_t>(answer.result.size())) return std::nullopt;
    if (seconds_at >= 0) answer.seconds_at = static_cast<std::size_t>(seconds_at);
    return answer;
}

// A record file serves answers as they are: one another user could have
// written would let them say what the tool prints. (Group write is left to
// the umask: a user's private group is common.)
std::optional<std::string> read_trusted(const fs::path& file)
{
    util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & S_IWOTH)) return std::nullopt;
    try {
        return util::read_open_file(fd.get(), file);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// Why an answer planned from `witnesses` may not be kept: a path the plan
// asked about that changed so shortly before the plan started that a later
// change could keep its times, or that changed while it ran (a folder a
// build published into: the plan may have seen it before). Folders only
// passed through are left out: a home or /tmp changes all the time.
std::string racy_witness(const std::vector<Witness>& witnesses, std::int64_t started_ns, std::int64_t margin_ns)
{
    for (const auto& w : witnesses) {
        if (!w.asked || w.role == Role::missing || w.role == Role::permission) continue;
        bool times_count = w.role == Role::content || w.role == Role::listed || w.role == Role::stated;
        if (w.changed_ns + margin_ns > started_ns || (times_count && w.modified_ns + margin_ns > started_ns))
            return w.path + " changed too recently (within the racy margin before the plan, or during it)";
    }
    return "";
}

// The answers written last are kept; temporaries of writers killed before
// their rename (`.<file>.<host>.<pid>.<n>.<random>`, util::AtomicFile) go
// once their writer is gone, as the source record's do.
void remove_oldest(const fs::path& folder, std::size_t keep)
{
    std::vector<std::pair<fs::file_time_type, fs::path>> files;
    std::error_code error;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        std::string name = it->path().filename().string();
        if (name[0] != '.') {
            if (it->is_regular_file(error)) files.emplace_back(it->last_write_time(error), it->path());
            continue;
        }
        std::size_t writer = name.find('.', 1);
        if (writer != std::string::npos && is_stale_temporary(it->path(), name.substr(writer + 1), 24 * 3600.0))
            fs::remove(it->path(), error);
    }
    if (files.size() <= keep) return;
    std::sort(files.begin(), files.end());
    for (std::size_t i = 0; i < files.size() - keep; ++i) fs::remove(files[i].second, error);
}

}  // namespace

AnswerRecord::AnswerRecord(fs::path folder, std::chrono::nanoseconds margin)
    : folder_(std::move(folder)), margin_ns_(margin.count())
{
}

fs::path AnswerRecord::file_of(const std::string& key) const
{
    return folder_ / sha256_hex(key).substr(0, 40);
}

std::optional<RecordedAnswer> AnswerRecord::find(const std::string& key) const
{
    std::optional<std::string> bytes = read_trusted(file_of(key));
    if (!bytes) return std::nullopt;
    std::optional<std::string_view> body = util::checksummed_body(record_format, *bytes);
    if (!body) return std::nullopt;
    Reader in(*body);
    std::string recorded_key;
    if (!in.text(recorded_key) || recorded_key != key) return std::nullopt;
    if (!environment_holds(in) || !witnesses_hold(in)) return std::nullopt;
    return decode_answer(in);
}

std::string AnswerRecord::keep(const std::string& key, const RecordedAnswer& answer, const FileAccesses& accesses,
                               std::chrono::system_clock::time_point started) const noexcept
{
    if (!accesses.incomplete.empty()) return accesses.incomplete;
    if (!accesses.written.empty()) return "the plan wrote " + accesses.written + ": printing its answer again would not";
    try {
        WitnessSet set;
        for (const auto& path : accesses.paths) set.add(path);
        std::vector<Witness> witnesses = set.take();
        for (const auto& check : accesses.permission_checks) witnesses.push_back(permission_witness(check));
        std::int64_t started_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(started.time_since_epoch()).count();
        if (std::string racy = racy_witness(witnesses, started_ns, margin_ns_); !racy.empty()) return racy;
        std::string body = encode(key, answer, accesses, witnesses);
        fs::create_directories(folder_);
        util::replace_file_atomically(file_of(key), util::checksummed(record_format, body));
        remove_oldest(folder_, max_answers);
        return "";
    } catch (const std::exception& error) {
        return error.what();
    }
}

std::optional<fs::path> answer_record_folder()
{
    if (auto home = util::home_folder()) return util::absolute_normal(*home / ".cache" / "cunumpy-kernels" / "answers");
    return std::nullopt;
}

}  // namespace ck
