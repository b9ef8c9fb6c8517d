// list, verify and prune: whole-entry operations on a cache root.
#include "cunumpy_kernels/cache_maintenance.hpp"
#include "cunumpy_kernels/error.hpp"

#include "cache/entry_check.hpp"
#include "cache/entry_removal.hpp"
#include "util/file_util.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>

namespace ck {

namespace fs = std::filesystem;

namespace {

// The kinds of entry this tool publishes, each under `<root>/<kind>/`.
const std::vector<std::string> entry_kinds = {"cuda"};

std::uint64_t folder_bytes(const fs::path& dir)
{
    std::uint64_t bytes = 0;
    std::error_code error;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
        std::error_code size_error;
        auto size = it->file_size(size_error);
        if (!size_error) bytes += size;
    }
    return bytes;
}

EntryInfo read_entry(const EntryStore& store, const std::string& kind, const fs::path& dir)
{
    EntryInfo info{kind, dir.filename().string(), dir, folder_bytes(dir), std::nullopt, ""};
    fs::path manifest_file = dir / "manifest.json";
    try {
        info.manifest = Manifest::from_json(nlohmann::json::parse(util::read_file(manifest_file)), manifest_file.string());
    } catch (const std::exception& error) {
        info.problem = error.what();
    }
    (void)store;
    return info;
}

// built_at is ISO 8601 UTC; an unreadable one counts as oldest.
std::time_t built_time(const EntryInfo& entry)
{
    if (!entry.manifest) return 0;
    std::tm tm{};
    if (!strptime(entry.manifest->built_at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
    return timegm(&tm);
}

double number_with_unit(const std::string& text, char& unit, const char* what)
{
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::string rest = text.substr(used);
    if (used == 0 || value < 0 || rest.size() > 1)
        throw UsageError(std::string("'") + text + "' is not " + what);
    unit = rest.empty() ? '\0' : static_cast<char>(std::tolower(static_cast<unsigned char>(rest[0])));
    return value;
}

}  // namespace

std::string entry_problem(const EntryInfo& entry)
{
    if (!entry.manifest) return "manifest.json unreadable: " + entry.problem;
    const Manifest& m = *entry.manifest;
    if (m.key != entry.key) return "manifest key " + m.key + " differs from the folder's name";
    if (cache_key(m.inputs) != entry.key) return "the key is not the SHA-256 of the recorded inputs";
    for (const auto& artifact : m.artifacts) {
        fs::path file = entry.dir / artifact.file;
        std::error_code error;
        auto size = fs::file_size(file, error);
        if (error) return artifact.file + ": missing";
        if (size != artifact.size) return artifact.file + ": " + std::to_string(size) + " bytes, manifest says " + std::to_string(artifact.size);
        if (sha256_file(file) != artifact.sha256) return artifact.file + ": SHA-256 mismatch";
    }
    return "";
}

std::vector<EntryInfo> list_entries(const EntryStore& store)
{
    std::vector<EntryInfo> entries;
    for (const auto& kind : entry_kinds)
        for (const auto& dir : store.entry_dirs(kind)) entries.push_back(read_entry(store, kind, dir));
    return entries;
}

std::vector<VerifyFinding> verify_entries(const EntryStore& store, bool remove_bad)
{
    std::vector<VerifyFinding> findings;
    for (const auto& entry : list_entries(store)) {
        std::string problem = entry_problem(entry);
        if (problem.empty()) continue;
        VerifyFinding finding{entry.dir, problem, false};
        if (remove_bad) finding.removed = remove_entry_atomically(store, entry.dir);
        findings.push_back(std::move(finding));
    }
    return findings;
}

std::vector<EntryInfo> prune_entries(const EntryStore& store, const PruneOptions& options)
{
    std::vector<EntryInfo> entries = list_entries(store);
    std::stable_sort(entries.begin(), entries.end(),
                     [](const EntryInfo& a, const EntryInfo& b) { return built_time(a) < built_time(b); });
    std::uint64_t total = 0;
    for (const auto& entry : entries) total += entry.bytes;
    std::time_t now = std::time(nullptr);
    std::vector<EntryInfo> removed;
    for (const auto& entry : entries) {
        bool too_old = options.max_age_seconds && double(now - built_time(entry)) > *options.max_age_seconds;
        bool too_big = options.max_bytes && total > *options.max_bytes;
        if (!too_old && !too_big) continue;
        if (!options.dry_run && !remove_entry_atomically(store, entry.dir)) continue;
        total -= entry.bytes;
        removed.push_back(entry);
    }
    return removed;
}

double parse_age(const std::string& text)
{
    char unit = 0;
    double value = number_with_unit(text, unit, "an age such as 30d, 12h, 45m or 90s");
    switch (unit) {
    case '\0':
    case 's': return value;
    case 'm': return value * 60;
    case 'h': return value * 3600;
    case 'd': return value * 86400;
    default: throw UsageError("'" + text + "' is not an age such as 30d, 12h, 45m or 90s");
    }
}

std::uint64_t parse_size(const std::string& text)
{
    char unit = 0;
    double value = number_with_unit(text, unit, "a size such as 500M or 2G");
    double scale = 1;
    switch (unit) {
    case '\0': break;
    case 'k': scale = 1024.0; break;
    case 'm': scale = 1024.0 * 1024; break;
    case 'g': scale = 1024.0 * 1024 * 1024; break;
    case 't': scale = 1024.0 * 1024 * 1024 * 1024; break;
    default: throw UsageError("'" + text + "' is not a size such as 500M or 2G");
    }
    return static_cast<std::uint64_t>(value * scale);
}

}  // namespace ck
