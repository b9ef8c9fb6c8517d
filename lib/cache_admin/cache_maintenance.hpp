// Inspecting, verifying, pruning, exporting and importing a cache root: what
// `cunumpy-kernels cache` does. Every removal is a rename out of place first,
// so a reader never sees half an entry; every import is checked and published
// like a build.
#pragma once

#include "cache/cache.hpp"
#include "cache/cache_stats.hpp"
#include "cunumpy_kernels/config.hpp"

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ck {

/// The counters of a cache since they were last zeroed.
struct CacheStatistics {
    CacheCounters counters;
    std::string since;  ///< UTC, ISO 8601, of the last zero_statistics; empty: since the cache began
};

/// Sums what every process recorded in `<root>/.stats/` (written by
/// lib/cache/cache_stats.hpp); where the root is writable, folds the
/// per-process files into `total.json` under a lock so that they do not pile
/// up. Never throws: unreadable files count nothing.
CacheStatistics read_statistics(const EntryStore& store);

/// Sets every counter to 0 and `since` to now (`cache info --zero`). Throws
/// CacheError when the statistics cannot be written.
void zero_statistics(const EntryStore& store);

/// One published entry, as listed from disk.
struct EntryInfo {
    std::string kind;  ///< "cuda", or "host" (a Pyccel build)
    std::string key;
    std::filesystem::path dir;
    std::uint64_t bytes = 0;           ///< all regular files of the entry, at any depth (links not followed)
    std::optional<Manifest> manifest;  ///< absent when unreadable
    std::string problem;               ///< why the manifest is unreadable
    /// Some kernel's latest key (`<kind>-last/`): a build of an unchanged tree
    /// hits it. An entry that is not current is superseded.
    bool current = false;
    /// Host: current, and a cunumpy `<stem>-<20 hex>` name points at it, or a
    /// linked entry imports it (builds load their imports from their entries).
    /// cunumpy loads such an entry, so prune never removes it. A name pointing
    /// at a superseded entry is cunumpy's name for an older text of the
    /// module: prune removes it with its entry.
    bool linked = false;
    /// When it last served a build or a load (EntryStore::record_use, a day's
    /// precision), else when it was built; 0 when neither is known.
    std::time_t last_used = 0;
};

/// Every entry of every kind this tool writes ("cuda", then "host"), each
/// sorted by key, with `current` and `linked` set.
std::vector<EntryInfo> list_entries(const EntryStore& store);

/// What is wrong with one entry.
struct VerifyFinding {
    std::filesystem::path entry;
    std::string problem;  ///< e.g. "push.sm_90.cubin: SHA-256 mismatch"
    bool removed = false;
};

/// Re-reads every entry: the manifest parses, its key is the SHA-256 of its
/// inputs and the folder's name, and every artifact has its recorded size and
/// SHA-256. With `remove_bad`, a bad entry is moved out and deleted, so the
/// next build rebuilds it; the cunumpy names pointing at a removed host entry
/// are removed first, so cunumpy never follows a dangling link. Returns the
/// findings; empty means a sound cache. `checked`, when given, receives how
/// many entries were read.
std::vector<VerifyFinding> verify_entries(const EntryStore& store, bool remove_bad, std::size_t* checked = nullptr);

/// What `cache prune` removes. Entries that no option selects stay.
struct PruneOptions {
    std::optional<double> max_age_seconds;   ///< remove entries not used (nor built) for longer
    std::optional<std::uint64_t> max_bytes;  ///< then remove entries until under this size
    bool superseded = false;                 ///< remove every superseded entry
    bool dry_run = false;                    ///< list, remove nothing
};

/// Removes entries, superseded ones (no kernel's current key) first, then
/// least recently used first (EntryInfo::last_used): under `max_bytes` an
/// edited kernel's old builds go before an unchanged kernel's current one,
/// and an entry a job loads every day outlives one nothing has loaded since
/// it was built. Never removes a
/// `linked` host entry, nor one that a kept host entry imports. Returns the
/// entries removed (or that would be), in that order.
std::vector<EntryInfo> prune_entries(const EntryStore& store, const PruneOptions& options);

/// Removes lock files nobody will use again, last written more than
/// `max_age_seconds` ago: breakers' turns (`<key>.lock.breaking`) that a
/// killed breaker left, and locks earlier versions moved aside
/// (`<key>.lock.broken.*`). A live turn stands for milliseconds; build locks
/// (`<key>.lock`) are left to the waiters that break them. `cache clean` and
/// `cache prune` call it. Returns how many were removed.
int remove_lock_leftovers(const EntryStore& store, double max_age_seconds = 3600);

/// What `cache clean` removed.
struct CleanSummary {
    std::size_t entries = 0;                     ///< entries removed
    std::uint64_t bytes = 0;                     ///< their size
    std::size_t records = 0;                     ///< latest-build and failure records removed
    int lock_leftovers = 0;                      ///< see remove_lock_leftovers
    std::vector<std::filesystem::path> removed;  ///< the entry folders removed (or, dry run, that would be)
};

/// Removes the entries built from `modules` (dotted Python modules: kernel
/// modules and the modules they import), every entry when `modules` is
/// empty, with the `<kind>-last/` and `<kind>-failed/` records of those
/// modules and the cunumpy names pointing at removed host entries. The tool
/// records (`.probes/`) and anything the tool did not write stay; lock
/// leftovers go (remove_lock_leftovers). Each entry
/// is renamed out of place before it is deleted, as prune does. With
/// `dry_run`, removes nothing and reports what would go (records: 0). Throws
/// CacheError when an entry cannot be removed (the others are still tried).
CleanSummary clean_entries(const EntryStore& store, const std::set<std::string>& modules, bool dry_run = false);

/// The dotted modules of a source tree, for clean_entries: every `.py` file
/// under `dir`, named from the source root of the kernel packages found there
/// (`src/sim/kernels/push/push_kernels.py` -> `sim.kernels.push.push_kernels`;
/// a package's `__init__.py` -> the package). Empty when `dir` holds no kernels.
/// The cache the kernels of `tree` use, as `build` of that tree would pick
/// it: `config.cache_dir` as is; else the root of cache_name_of(config, the
/// top-level package of the first kernel under `tree`). `config` is the
/// tree's (load_config) with the command's flags applied. `for_writing` as in
/// resolve_cache_location. Throws UsageError when neither a cache folder nor
/// a name is given and `tree` holds no kernel; CacheError as
/// resolve_cache_location.
CacheLocation locate_tree_cache(const std::filesystem::path& tree, const Config& config, bool for_writing);

std::set<std::string> tree_modules(const std::filesystem::path& dir, const Config& config);

/// Parses "30d", "12h", "45m", "90s" or plain seconds. Throws UsageError.
double parse_age(const std::string& text);

/// Parses "500M", "2G", "1024K" or plain bytes (powers of 1024). Throws UsageError.
std::uint64_t parse_size(const std::string& text);

/// An entry that export left out, and why.
struct LeftOutEntry {
    std::filesystem::path entry;
    std::string reason;  ///< e.g. "host (Pyccel) build of m: it holds absolute paths ..."
};

/// What export or import did.
struct ArchiveSummary {
    std::size_t entries = 0;  ///< entries written or published
    std::size_t skipped = 0;  ///< entries already present (import) or left out (export)
    std::uint64_t bytes = 0;
    std::vector<LeftOutEntry> left_out;  ///< export: each entry not carried, with the reason
};

/// Writes every sound CUDA entry into a tar archive compressed with zstd
/// (libarchive), paths relative to the root: `cuda/<kk>/<key>/<file>`.
/// Host entries and unsound entries are left out and listed in `left_out`:
/// a host build holds absolute paths into its root, so it cannot load
/// anywhere else.
/// Throws CacheError when the archive cannot be written.
ArchiveSummary export_entries(const EntryStore& store, const std::filesystem::path& archive);

/// The entries of an archive written by export_entries, read whole and
/// checked: nothing of an import is written before all of it passed.
struct CheckedArchive {
    struct Entry {
        std::string kind;  ///< "cuda"
        Manifest manifest;
        std::map<std::string, std::string> files;  ///< file name -> bytes, manifest.json included
    };
    std::vector<Entry> entries;
};

/// Reads and checks an archive written by export_entries, as verify_entries
/// checks entries. The archive is untrusted: only tar (plain or zstd), only
/// regular files at `cuda/<kk>/<key>/<name>`, at most 256 MiB a file and
/// 4 GiB in all, each manifest's key the SHA-256 of its inputs, each
/// artifact of its checksum and loadable for its target.
/// Throws CacheError naming the archive and the offending member.
CheckedArchive read_archive(const std::filesystem::path& archive);

/// Publishes each entry of `archive` that the cache lacks, atomically; an
/// entry already there is counted as skipped.
/// Throws CacheError when every user can write the root (readers would
/// refuse what it publishes), and when an entry cannot be written (entries
/// published before stay).
ArchiveSummary import_entries(const EntryStore& store, const CheckedArchive& archive);

/// import_entries(store, read_archive(archive)).
ArchiveSummary import_entries(const EntryStore& store, const std::filesystem::path& archive);

}  // namespace ck
