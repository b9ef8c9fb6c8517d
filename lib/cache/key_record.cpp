#include "cache/key_record.hpp"

#include "cache/write_access.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/atomic_file.hpp"
#include "util/checksummed.hpp"
#include "util/code_identity.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include <sys/stat.h>

#include <array>
#include <charconv>
#include <string_view>

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view record_format = "cunumpy-kernels/key-record/2";
constexpr std::string_view no_manifest = "manifest -";
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

// "<dev> <ino> <size> <mtime> <ctime> ", as witness and manifest lines keep a stat.
std::string stat_text(const util::FileStat& stat)
{
    return std::to_string(stat.device) + " " + std::to_string(stat.inode) + " " + std::to_string(stat.size) + " " +
           std::to_string(stat.modified_ns) + " " + std::to_string(stat.changed_ns) + " ";
}

bool next_stat(std::string_view& rest, util::FileStat& stat)
{
    return next_number(rest, stat.device) && next_number(rest, stat.inode) && next_number(rest, stat.size) &&
           next_number(rest, stat.modified_ns) && next_number(rest, stat.changed_ns);
}

// Whether one witness line ("r <stat> <path>" or "a <path>") holds now.
bool holds(std::string_view line)
{
    if (line.size() < 2 || line[1] != ' ') return false;
    char kind = line[0];
    line.remove_prefix(2);
    if (kind == 'a') return !util::regular_file_stat(std::string(line).c_str());
    if (kind != 'r') return false;
    util::FileStat kept;
    if (!next_stat(line, kept)) return false;
    std::optional<util::FileStat> now = util::regular_file_stat(std::string(line).c_str());
    return now && *now == kept;
}

// Each field of a manifest line as "<length>:<text>", so that none can end early.
void add_part(std::string& line, std::string_view part)
{
    line += std::to_string(part.size());
    line += ':';
    line += part;
}

bool next_part(std::string_view& rest, std::string_view& part)
{
    std::size_t size = 0;
    auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), size);
    if (error != std::errc() || end == rest.data() + rest.size() || *end != ':') return false;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()) + 1);
    if (size > rest.size()) return false;
    part = rest.substr(0, size);
    rest.remove_prefix(size);
    return true;
}

template <typename T>
bool next_part_number(std::string_view& rest, T& value)
{
    std::string_view part;
    if (!next_part(rest, part)) return false;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    return error == std::errc() && end == part.data() + part.size();
}

// The fields of a manifest that loading reads, in the order a line keeps them.
template <typename M>
auto kept_fields(M& manifest)
{
    return std::array{&manifest.kind, &manifest.module, &manifest.kernel, &manifest.entry_symbol, &manifest.target};
}

// "manifest <stat> <fields>" for a reading of `key`'s entry that may be
// kept; "manifest -" otherwise (another key's, or a field with a newline).
std::string manifest_line(const ManifestReading* reading, const std::string& key)
{
    if (!reading || reading->manifest.key != key) return std::string(no_manifest);
    const Manifest& manifest = reading->manifest;
    std::string line = "manifest " + stat_text(reading->seen);
    for (const std::string* field : kept_fields(manifest)) add_part(line, *field);
    add_part(line, std::to_string(manifest.artifacts.size()));
    for (const Artifact& artifact : manifest.artifacts) {
        for (const std::string* field : {&artifact.file, &artifact.target, &artifact.sha256}) add_part(line, *field);
        add_part(line, std::to_string(artifact.size));
    }
    if (line.find('\n') != std::string::npos) return std::string(no_manifest);
    return line;
}

// The reading a manifest line keeps for the entry `key` (none for "manifest
// -"); false for a line that is not one.
bool read_manifest_line(std::string_view line, std::string_view key, std::optional<ManifestReading>& reading)
{
    if (line == no_manifest) return true;
    constexpr std::string_view prefix = "manifest ";
    if (line.substr(0, prefix.size()) != prefix) return false;
    line.remove_prefix(prefix.size());
    ManifestReading kept;
    Manifest& manifest = kept.manifest;
    manifest.key = key;
    std::string_view part;
    if (!next_stat(line, kept.seen)) return false;
    for (std::string* field : kept_fields(manifest)) {
        if (!next_part(line, part)) return false;
        field->assign(part);
    }
    std::size_t count = 0;
    if (!next_part_number(line, count) || count > line.size()) return false;
    for (std::size_t i = 0; i < count; ++i) {
        Artifact artifact;
        for (std::string* field : {&artifact.file, &artifact.target, &artifact.sha256}) {
            if (!next_part(line, part)) return false;
            field->assign(part);
        }
        if (!next_part_number(line, artifact.size) || !is_entry_file_name(artifact.file)) return false;
        manifest.artifacts.push_back(std::move(artifact));
    }
    if (!line.empty()) return false;
    reading = std::move(kept);
    return true;
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

// The lines a record starts with; `witnesses` holds the rest.
struct RecordHead {
    std::string_view code, question, key, late, manifest, witnesses;
};

// The lines a record starts with, each ended by a newline.
std::string head_text(std::string_view code, std::string_view question, std::string_view key, std::string_view late,
                      std::string_view manifest)
{
    std::string text;
    for (std::string_view line : {code, question, key, late, manifest}) {
        text += line;
        text += '\n';
    }
    return text;
}

bool read_head(std::string_view body, RecordHead& head)
{
    for (std::string_view* line : {&head.code, &head.question, &head.key, &head.late, &head.manifest})
        if (!next_line(body, *line)) return false;
    head.witnesses = body;
    return !head.code.empty() && head.code == util::code_identity();
}

// Whether a manifest's reading may be kept: changed before `trusted_before`
// (ns since the epoch), and still the file that was read.
bool manifest_trusted(const ManifestReading* manifest, std::int64_t trusted_before)
{
    return manifest && manifest->seen.modified_ns < trusted_before && manifest->seen.changed_ns < trusted_before &&
           util::regular_file_stat(manifest->file.c_str()) == manifest->seen;
}

// The ranks of one job plan together: the first to finish keeps the record;
// the others find it written since they started and write nothing.
bool written_since(const fs::path& file, std::chrono::system_clock::time_point start)
{
    struct stat kept {};
    return ::stat(file.c_str(), &kept) == 0 && util::ns_of(kept.st_mtim) >= ns_since_epoch(start);
}

void write_record(const fs::path& file, const std::string& body)
{
    std::error_code error;
    fs::create_directory(file.parent_path(), error);
    if (error) return;
    util::AtomicFile atomic(file);
    atomic.write(util::checksummed(record_format, body));
    atomic.commit();
}

}  // namespace

KeyRecord::KeyRecord(fs::path root, std::chrono::nanoseconds margin, ClearedFolders* cleared)
    : root_(std::move(root)), margin_ns_(margin.count()), cleared_(cleared ? cleared : &own_cleared_)
{
}

fs::path KeyRecord::file_of(const std::string& question) const { return root_ / ".keys" / sha256_hex(question); }

std::optional<KeptKey> KeyRecord::find(const std::string& question,
                                       const std::function<std::optional<fs::path>()>& late_dir) const
{
    try {
        fs::path file = file_of(question);
        std::string bytes = util::read_file(file, max_record_bytes);
        std::optional<std::string_view> body = util::checksummed_body(record_format, bytes);
        if (!body) return std::nullopt;
        RecordHead head;
        if (!read_head(*body, head) || head.question != question) return std::nullopt;
        KeptKey kept{std::string(head.key), std::nullopt};
        if (!read_manifest_line(head.manifest, head.key, kept.manifest)) return std::nullopt;
        // A record another user could have written could name another entry.
        if (!other_writable_problem(root_, file, {}, cleared_).empty()) return std::nullopt;
        std::string_view rest = head.witnesses, line;
        while (next_line(rest, line))
            if (!holds(line)) return std::nullopt;
        if (!rest.empty()) return std::nullopt;
        if (head.late != "late -") {
            std::optional<fs::path> now = late_dir ? late_dir() : std::nullopt;
            if (head.late != late_line(now ? std::optional<std::string>(now->string()) : std::nullopt))
                return std::nullopt;
        }
        return kept;
    } catch (const std::exception&) {
        return std::nullopt;  // unreadable, too large, or a witness that cannot be asked: planned again
    }
}

void KeyRecord::keep(const std::string& question, const std::string& key, const KeyWitnesses& witnesses,
                     std::chrono::system_clock::time_point planned_at, const ManifestReading* manifest) const noexcept
{
    try {
        std::int64_t trusted_before = ns_since_epoch(planned_at) - margin_ns_;
        const std::string& code = util::code_identity();
        std::string late = late_line(witnesses.late_dir);
        for (std::string_view text :
             {std::string_view(code), std::string_view(question), std::string_view(key), std::string_view(late)})
            if (text.find('\n') != std::string_view::npos) return;
        if (code.empty()) return;  // keys planned by an unknown build of this code are not kept
        // The manifest's reading is kept on the witnesses' terms: old enough, and still the file read.
        bool trusted = manifest_trusted(manifest, trusted_before);
        std::string body = head_text(code, question, key, late, manifest_line(trusted ? manifest : nullptr, key));
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
            body += "r " + stat_text(seen) + path + "\n";
        }
        std::error_code error;
        if (!fs::is_directory(root_, error)) return;
        fs::path file = file_of(question);
        if (written_since(file, planned_at)) return;
        write_record(file, body);
    } catch (const std::exception&) {
        // A record is an optimisation: the next process plans again.
    }
}

void KeyRecord::add_manifest(const std::string& question, const std::string& key, const ManifestReading& manifest,
                             std::chrono::system_clock::time_point looked_up_at) const noexcept
{
    try {
        fs::path file = file_of(question);
        if (written_since(file, looked_up_at) ||
            !manifest_trusted(&manifest, ns_since_epoch(looked_up_at) - margin_ns_))
            return;
        std::string bytes = util::read_file(file, max_record_bytes);
        std::optional<std::string_view> body = util::checksummed_body(record_format, bytes);
        RecordHead head;
        if (!body || !read_head(*body, head) || head.question != question || head.key != key ||
            head.manifest != no_manifest)
            return;
        std::string line = manifest_line(&manifest, key);
        if (line == no_manifest) return;
        // The witnesses as they were: the find that gave the key checked them,
        // and the next one checks them again.
        std::string updated = head_text(head.code, head.question, head.key, head.late, line);
        updated += head.witnesses;
        write_record(file, updated);
    } catch (const std::exception&) {
        // The record stays as it was: later first calls read the manifest.
    }
}

}  // namespace ck
