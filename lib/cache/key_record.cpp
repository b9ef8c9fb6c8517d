#include "cache/key_record.hpp"

#include "cache/write_access.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/atomic_file.hpp"
#include "util/checksummed.hpp"
#include "util/code_identity.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include <sys/stat.h>

#include <charconv>
#include <string_view>

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view record_format = "cunumpy-kernels/key-record/1";
constexpr std::uint64_t max_record_bytes = 1u << 20;

// Splits off the text up to the next newline; false at the end.
bool next_line(std::string_view& rest, std::string_view& line)
{
    if (rest.empty()) return false;
    std::size_t end = rest.find('\n');
    if (end == std::string_view::npos) return false;  // every line ends in a newline
    line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    return true;
}

// Splits off the next space-separated number.
template <typename T>
bool next_number(std::string_view& rest, T& value)
{
    auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (error != std::errc() || end == rest.data() + rest.size() || *end != ' ') return false;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()) + 1);
    return true;
}

// Whether one witness line ("r <dev> <ino> <size> <mtime> <ctime> <path>" or
// "a <path>") holds now.
bool holds(std::string_view line)
{
    if (line.size() < 2 || line[1] != ' ') return false;
    char kind = line[0];
    line.remove_prefix(2);
    if (kind == 'a') return !util::regular_file_stat(std::string(line).c_str());
    if (kind != 'r') return false;
    util::FileStat kept;
    if (!next_number(line, kept.device) || !next_number(line, kept.inode) || !next_number(line, kept.size) ||
        !next_number(line, kept.modified_ns) || !next_number(line, kept.changed_ns))
        return false;
    std::optional<util::FileStat> now = util::regular_file_stat(std::string(line).c_str());
    return now && *now == kept;
}

std::string late_line(const std::optional<std::optional<std::string>>& late_dir)
{
    if (!late_dir) return "late -";
    return *late_dir ? "late dir " + **late_dir : "late none";
}

std::int64_t ns_since_epoch(std::chrono::system_clock::time_point time)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

}  // namespace

KeyRecord::KeyRecord(fs::path root, std::chrono::nanoseconds margin)
    : root_(std::move(root)), margin_ns_(margin.count())
{
}

fs::path KeyRecord::file_of(const std::string& question) const
{
    return root_ / ".keys" / sha256_hex(question);
}

std::optional<std::string> KeyRecord::find(const std::string& question,
                                           const std::function<std::optional<fs::path>()>& late_dir) const
{
    try {
        fs::path file = file_of(question);
        std::string bytes = util::read_file(file, max_record_bytes);
        std::optional<std::string_view> body = util::checksummed_body(record_format, bytes);
        if (!body) return std::nullopt;
        std::string_view rest = *body, code, line, key, late;
        if (!next_line(rest, code) || code.empty() || code != util::code_identity() || !next_line(rest, line) ||
            line != question || !next_line(rest, key) || !next_line(rest, late))
            return std::nullopt;
        // A record another user could have written could name another entry.
        std::set<std::string> cleared;
        {
            std::lock_guard lock(cleared_mutex_);
            cleared = cleared_;
        }
        if (!other_writable_problem(root_, file.parent_path(), {file.filename()}, &cleared).empty()) return std::nullopt;
        {
            std::lock_guard lock(cleared_mutex_);
            cleared_.insert(cleared.begin(), cleared.end());
        }
        while (next_line(rest, line))
            if (!holds(line)) return std::nullopt;
        if (!rest.empty()) return std::nullopt;
        if (late != "late -") {
            std::optional<fs::path> now = late_dir ? late_dir() : std::nullopt;
            if (late != late_line(now ? std::optional<std::string>(now->string()) : std::nullopt)) return std::nullopt;
        }
        return std::string(key);
    } catch (const std::exception&) {
        return std::nullopt;  // unreadable, too large, or a witness that cannot be asked: planned again
    }
}

void KeyRecord::keep(const std::string& question, const std::string& key, const KeyWitnesses& witnesses,
                     std::chrono::system_clock::time_point planned_at) const noexcept
{
    try {
        std::int64_t trusted_before = ns_since_epoch(planned_at) - margin_ns_;
        const std::string& code = util::code_identity();
        std::string late = late_line(witnesses.late_dir);
        for (std::string_view text : {std::string_view(code), std::string_view(question), std::string_view(key),
                                      std::string_view(late)})
            if (text.find('\n') != std::string_view::npos) return;
        if (code.empty()) return;  // keys planned by an unknown build of this code are not kept
        std::string body = code + "\n" + question + "\n" + key + "\n" + late + "\n";
        for (const KeyWitness& witness : witnesses.files) {
            const std::string& path = witness.path;
            if (path.find('\n') != std::string::npos) return;
            if (util::regular_file_stat(path.c_str()) != witness.seen) return;  // changed since the planning asked
            if (!witness.seen) {
                body += "a " + path + "\n";
                continue;
            }
            const util::FileStat& seen = *witness.seen;
            if (seen.modified_ns >= trusted_before || seen.changed_ns >= trusted_before) return;
            // The bytes the planning read may have come from another file the
            // path named for a moment (a link re-pointed and back).
            if (!witness.sha256.empty() &&
                (sha256_hex(util::read_file(path)) != witness.sha256 || util::regular_file_stat(path.c_str()) != seen))
                return;
            body += "r " + std::to_string(seen.device) + " " + std::to_string(seen.inode) + " " +
                    std::to_string(seen.size) + " " + std::to_string(seen.modified_ns) + " " +
                    std::to_string(seen.changed_ns) + " " + path + "\n";
        }
        std::error_code error;
        if (!fs::is_directory(root_, error)) return;
        fs::path file = file_of(question);
        // The ranks of one job plan together: the first to finish keeps the
        // record; the others find it written since they started and write nothing.
        struct stat kept {};
        if (::stat(file.c_str(), &kept) == 0 && util::ns_of(kept.st_mtim) >= ns_since_epoch(planned_at)) return;
        fs::create_directory(file.parent_path(), error);
        if (error) return;
        util::AtomicFile atomic(file);
        atomic.write(util::checksummed(record_format, body));
        atomic.commit();
    } catch (const std::exception&) {
        // A record is an optimisation: the next process plans again.
    }
}

}  // namespace ck
