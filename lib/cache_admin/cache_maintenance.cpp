// list, verify and prune: whole-entry operations on a cache root.
#include "cache_admin/cache_maintenance.hpp"
#include "util/json_text.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"

#include "host/cunumpy_entry.hpp"
#include "cache_admin/entry_check.hpp"
#include "cache/build_lock.hpp"
#include "cache/entry_removal.hpp"
#include "compilers/artifact_check.hpp"
#include "cuda_job/cuda_job.hpp"
#include "util/file_util.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <map>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

// The kinds of entry this tool publishes, each under `<root>/<kind>/`.
const std::vector<std::string> entry_kinds = {"cuda", "host"};

// Host entries nest (package folders, `__pyccel__/`) and hold links to their
// imports' stubs in other entries: count regular files only, never follow links.
std::uint64_t folder_bytes(const fs::path& dir)
{
    std::uint64_t bytes = 0;
    std::error_code error;
    for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
        std::error_code size_error;
        if (!it->is_regular_file(size_error) || it->is_symlink(size_error)) continue;
        auto size = it->file_size(size_error);
        if (!size_error) bytes += size;
    }
    return bytes;
}

EntryInfo read_entry(const std::string& kind, const fs::path& dir)
{
    EntryInfo info{kind, dir.filename().string(), dir, folder_bytes(dir), std::nullopt, "", false, false};
    fs::path manifest_file = dir / "manifest.json";
    try {
        info.manifest = Manifest::from_json(util::parse_json(util::read_file(manifest_file)), manifest_file.string());
    } catch (const TransientReadError&) {
        throw;  // another node is rewriting it: no finding (verify --fix would remove a good entry); try again
    } catch (const std::exception& error) {
        info.problem = error.what();
    }
    return info;
}

// The keys of the host entries `entry` imports (its key inputs name them).
std::vector<std::string> imported_keys(const EntryInfo& entry)
{
    std::vector<std::string> keys;
    if (entry.kind != "host" || !entry.manifest) return keys;
    auto imports = entry.manifest->inputs.find("imports");
    if (imports == entry.manifest->inputs.end() || !imports->is_object()) return keys;
    for (const auto& key : *imports)  // the values: name -> key
        if (key.is_string()) keys.push_back(key.get<std::string>());
    return keys;
}

// Marks the current host entries cunumpy's names point at, and everything
// they import. A name pointing at a superseded entry is cunumpy's name for an
// older text of the module (cunumpy names builds after the text): it goes
// with its entry.
void mark_linked(std::vector<EntryInfo>& entries, const fs::path& root)
{
    std::map<std::string, EntryInfo*> hosts;
    for (auto& entry : entries)
        if (entry.kind == "host") hosts[entry.key] = &entry;
    std::vector<std::string> pending;
    for (const auto& link : cunumpy_links_by_key(root)) {
        auto found = hosts.find(link.first);
        if (found != hosts.end() && found->second->current) pending.push_back(link.first);
    }
    while (!pending.empty()) {
        auto found = hosts.find(pending.back());
        pending.pop_back();
        if (found == hosts.end() || found->second->linked) continue;
        found->second->linked = true;
        for (const auto& key : imported_keys(*found->second)) pending.push_back(key);
    }
}

// Removes an entry. A host entry loses the cunumpy names pointing at it
// first, so that cunumpy compiles the module itself rather than follow a
// dangling link.
bool remove_entry(const EntryStore& store, const EntryInfo& entry)
{
    if (entry.kind == "host") {
        auto links = cunumpy_links_by_key(store.root());
        std::error_code ignored;
        for (const auto& link : links[entry.key]) fs::remove(link, ignored);
    }
    bool removed = remove_entry_atomically(store, entry.dir);
    std::error_code ignored;
    if (removed) fs::remove(store.root() / (entry.kind + "-used") / entry.key, ignored);
    return removed;
}

// Whether a host entry that stays imports `entry`: its extension loads from there.
bool imported_by_kept(const EntryInfo& entry, const std::vector<EntryInfo>& entries, const std::set<std::string>& gone)
{
    if (entry.kind != "host") return false;
    return std::any_of(entries.begin(), entries.end(), [&](const EntryInfo& other) {
        if (gone.count(other.key)) return false;
        auto keys = imported_keys(other);
        return std::find(keys.begin(), keys.end(), entry.key) != keys.end();
    });
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
    if (used == 0 || value < 0 || rest.size() > 1) throw UsageError(std::string("'") + text + "' is not " + what);
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
    if (entry.kind == "cuda")
        if (std::string problem = manifest_identity_problem(m); !problem.empty()) return problem;
    for (const auto& artifact : m.artifacts) {
        fs::path file = entry.dir / artifact.file;
        std::error_code error;
        auto size = fs::file_size(file, error);
        if (error) return artifact.file + ": missing";
        if (size != artifact.size)
            return artifact.file + ": " + std::to_string(size) + " bytes, manifest says " +
                   std::to_string(artifact.size);
        if (entry.kind != "cuda") {
            // Host extensions can be large: hashed streaming, and not load-checked here.
            if (sha256_file(file) != artifact.sha256) return artifact.file + ": SHA-256 mismatch";
            continue;
        }
        // A cubin or PTX is read once, for its checksum and for what a build
        // checks before publishing (entries can come another way).
        std::string bytes = util::read_file(file);
        if (sha256_hex(bytes) != artifact.sha256) return artifact.file + ": SHA-256 mismatch";
        try {
            check_artifact(bytes, ArtifactExpectation{artifact.file, artifact.target, m.entry_symbol});
        } catch (const ArtifactCheckError& error) {
            // Without a compile's advice: the entry's callers say what to do (verify --fix).
            return artifact.file + " for " + artifact.target + ": check '" + to_string(error.check()) +
                   "' failed: " + error.finding();
        }
    }
    return "";
}

int remove_lock_leftovers(const EntryStore& store, double max_age_seconds)
{
    int removed = 0;
    auto now = fs::file_time_type::clock::now();
    for (const auto& kind : entry_kinds) {
        std::error_code error;
        for (fs::directory_iterator shard(store.root() / kind, error), end; !error && shard != end;
             shard.increment(error)) {
            std::vector<fs::path> leftovers;
            std::error_code inner;
            for (fs::directory_iterator file(shard->path(), inner); !inner && file != end; file.increment(inner)) {
                std::error_code stat_error;
                auto written = is_lock_leftover(file->path()) ? fs::last_write_time(file->path(), stat_error)
                                                              : fs::file_time_type::max();
                if (!stat_error && written <= now &&
                    std::chrono::duration<double>(now - written).count() > max_age_seconds)
                    leftovers.push_back(file->path());
            }
            for (const auto& leftover : leftovers) removed += fs::remove(leftover, inner) ? 1 : 0;
        }
    }
    return removed;
}

std::vector<EntryInfo> list_entries(const EntryStore& store)
{
    std::vector<EntryInfo> entries;
    for (const auto& kind : entry_kinds) {
        std::set<std::string> current = store.latest_keys(kind);
        for (const auto& dir : store.entry_dirs(kind)) {
            entries.push_back(read_entry(kind, dir));
            EntryInfo& entry = entries.back();
            entry.current = current.count(entry.key) > 0;
            entry.last_used = std::max(built_time(entry), store.last_use(kind, entry.key).value_or(0));
        }
    }
    mark_linked(entries, store.root());
    return entries;
}

std::vector<VerifyFinding> verify_entries(const EntryStore& store, bool remove_bad, std::size_t* checked)
{
    std::vector<VerifyFinding> findings;
    std::vector<EntryInfo> entries = list_entries(store);
    if (checked) *checked = entries.size();
    for (const auto& entry : entries) {
        std::string problem = entry_problem(entry);
        if (problem.empty()) continue;
        VerifyFinding finding{entry.dir, problem, false};
        if (remove_bad) finding.removed = remove_entry(store, entry);
        findings.push_back(std::move(finding));
    }
    return findings;
}

std::vector<EntryInfo> prune_entries(const EntryStore& store, const PruneOptions& options)
{
    std::vector<EntryInfo> entries = list_entries(store);
    std::stable_sort(entries.begin(), entries.end(), [](const EntryInfo& a, const EntryInfo& b) {
        if (a.current != b.current) return b.current;  // superseded first
        return a.last_used < b.last_used;
    });
    std::uint64_t total = 0;
    for (const auto& entry : entries) total += entry.bytes;
    std::time_t now = std::time(nullptr);
    std::vector<EntryInfo> removed;
    std::set<std::string> gone;
    // An import skipped because its importer stayed may go once the importer
    // has gone: repeat until a pass removes nothing.
    for (bool progress = true; progress;) {
        progress = false;
        for (const auto& entry : entries) {
            if (gone.count(entry.key) || entry.linked) continue;
            bool too_old = options.max_age_seconds && double(now - entry.last_used) > *options.max_age_seconds;
            bool too_big = options.max_bytes && total > *options.max_bytes;
            bool superseded = options.superseded && !entry.current;
            if (!too_old && !too_big && !superseded) continue;
            if (imported_by_kept(entry, entries, gone)) continue;
            if (!options.dry_run && !remove_entry(store, entry)) continue;
            total -= entry.bytes;
            gone.insert(entry.key);
            removed.push_back(entry);
            progress = true;
        }
    }
    return removed;
}

namespace {

// Removes the `<kind>-last` and `<kind>-failed` records of `modules` (all when empty).
std::size_t remove_records(const fs::path& root, const std::set<std::string>& modules)
{
    std::size_t removed = 0;
    for (const auto& kind : entry_kinds)
        for (const char* suffix : {"-last", "-failed"}) {
            std::error_code error;
            std::vector<fs::path> records;
            for (fs::directory_iterator it(root / (kind + suffix), error), end; !error && it != end;
                 it.increment(error)) {
                std::string name = it->path().filename().string();
                if (modules.empty() || modules.count(name.substr(0, name.rfind('@')))) records.push_back(it->path());
            }
            for (const auto& record : records) removed += fs::remove(record, error) ? 1 : 0;
        }
    return removed;
}

}  // namespace

CleanSummary clean_entries(const EntryStore& store, const std::set<std::string>& modules, bool dry_run)
{
    CleanSummary summary;
    std::vector<std::string> failed;
    for (const auto& entry : list_entries(store)) {
        // An entry whose manifest is unreadable belongs to no tree; only a whole clean takes it.
        if (!modules.empty() && (!entry.manifest || !modules.count(entry.manifest->module))) continue;
        if (!dry_run && !remove_entry(store, entry)) {
            failed.push_back(entry.dir.string());
            continue;
        }
        ++summary.entries;
        summary.bytes += entry.bytes;
        summary.removed.push_back(entry.dir);
    }
    if (dry_run) return summary;
    summary.records = remove_records(store.root(), modules);
    summary.lock_leftovers = remove_lock_leftovers(store);
    if (!failed.empty())
        throw CacheError("cache clean: could not remove " + util::counted(failed.size(), "entry", "entries") +
                         ", first " + failed.front() + ": check the permissions of the cache folder");
    return summary;
}

CacheLocation locate_tree_cache(const fs::path& tree, const Config& config, bool for_writing)
{
    if (config.cache_dir || config.cache_name)
        return resolve_cache_location(config.cache_name.value_or(""), config.cache_dir, for_writing);
    auto kernels = find_kernels({tree}, config);
    if (kernels.empty())
        throw UsageError("no kernels in " + tree.string() +
                         " to name the cache: pass --cache-dir, --cache-name, or --tree");
    return resolve_cache_location(cache_name_of(config, kernels.front().top_package), std::nullopt, for_writing);
}

std::set<std::string> tree_modules(const fs::path& dir, const Config& config)
{
    std::set<std::string> modules;
    std::set<fs::path> roots;
    for (const auto& kernel : find_kernels({dir}, config)) {
        modules.insert(kernel.module);
        roots.insert(kernel.source_root);
    }
    std::error_code error;
    for (const auto& source_root : roots) {
        fs::path root = fs::absolute(source_root).lexically_normal();
        for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
            if (!it->is_regular_file() || it->path().extension() != ".py") continue;
            fs::path relative = fs::absolute(it->path()).lexically_normal().lexically_relative(root);
            if (relative.empty() || *relative.begin() == "..") continue;
            relative.replace_extension();
            if (relative.filename() == "__init__") relative = relative.parent_path();
            std::string name;
            for (const auto& part : relative) name += (name.empty() ? "" : ".") + part.string();
            if (!name.empty()) modules.insert(name);
        }
    }
    return modules;
}

double parse_age(const std::string& text)
{
    char unit = 0;
    double value = number_with_unit(text, unit, "an age such as 30d, 12h, 45m or 90s");
    switch (unit) {
        case '\0':
        case 's':
            return value;
        case 'm':
            return value * 60;
        case 'h':
            return value * 3600;
        case 'd':
            return value * 86400;
        default:
            throw UsageError("'" + text + "' is not an age such as 30d, 12h, 45m or 90s");
    }
}

std::uint64_t parse_size(const std::string& text)
{
    char unit = 0;
    double value = number_with_unit(text, unit, "a size such as 500M or 2G");
    double scale = 1;
    switch (unit) {
        case '\0':
            break;
        case 'k':
            scale = 1024.0;
            break;
        case 'm':
            scale = 1024.0 * 1024;
            break;
        case 'g':
            scale = 1024.0 * 1024 * 1024;
            break;
        case 't':
            scale = 1024.0 * 1024 * 1024 * 1024;
            break;
        default:
            throw UsageError("'" + text + "' is not a size such as 500M or 2G");
    }
    return static_cast<std::uint64_t>(value * scale);
}

}  // namespace ck
