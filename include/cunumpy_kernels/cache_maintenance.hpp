// Inspecting, verifying, pruning, exporting and importing a cache root: what
// `cunumpy-kernels cache` does. Every removal is a rename out of place first,
// so a reader never sees half an entry; every import is checked and published
// like a build.
#pragma once

#include "cunumpy_kernels/cache.hpp"
#include "cunumpy_kernels/export.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// One published entry, as listed from disk.
struct EntryInfo {
    std::string kind;             ///< "cuda"
    std::string key;
    std::filesystem::path dir;
    std::uint64_t bytes = 0;      ///< all files of the entry
    std::optional<Manifest> manifest;  ///< absent when unreadable
    std::string problem;          ///< why the manifest is unreadable
};

/// Every entry of every kind this tool writes ("cuda"), sorted by key.
CK_API std::vector<EntryInfo> list_entries(const EntryStore& store);

/// What is wrong with one entry.
struct VerifyFinding {
    std::filesystem::path entry;
    std::string problem;          ///< e.g. "push.sm_90.cubin: SHA-256 mismatch"
    bool removed = false;
};

/// Re-reads every entry: the manifest parses, its key is the SHA-256 of its
/// inputs and the folder's name, and every artifact has its recorded size and
/// SHA-256. With `remove_bad`, a bad entry is moved out and deleted, so the
/// next build rebuilds it. Returns the findings; empty means a sound cache.
CK_API std::vector<VerifyFinding> verify_entries(const EntryStore& store, bool remove_bad);

struct PruneOptions {
    std::optional<double> max_age_seconds;   ///< remove entries built longer ago
    std::optional<std::uint64_t> max_bytes;  ///< then remove the oldest until under this size
    bool dry_run = false;                    ///< list, remove nothing
};

/// Removes entries by age of build (oldest first). Reads are not recorded, so
/// that warm builds and MPI ranks never write to the cache: "oldest" means
/// built longest ago. Returns the entries removed (or that would be).
CK_API std::vector<EntryInfo> prune_entries(const EntryStore& store, const PruneOptions& options);

/// Parses "30d", "12h", "45m", "90s" or plain seconds. Throws UsageError.
CK_API double parse_age(const std::string& text);

/// Parses "500M", "2G", "1024K" or plain bytes (powers of 1024). Throws UsageError.
CK_API std::uint64_t parse_size(const std::string& text);

struct ArchiveSummary {
    std::size_t entries = 0;      ///< entries written or published
    std::size_t skipped = 0;      ///< entries already present (import) or unsound (export)
    std::uint64_t bytes = 0;
};

/// Writes every sound entry into a tar archive compressed with zstd
/// (libarchive), paths relative to the root: `cuda/<kk>/<key>/<file>`.
/// Throws CacheError when the archive cannot be written.
CK_API ArchiveSummary export_entries(const EntryStore& store, const std::filesystem::path& archive);

/// Reads an archive written by export_entries and publishes each entry that
/// is missing, atomically, after checking it as verify_entries does. The
/// archive is untrusted: only tar (plain or zstd), only regular files at
/// `cuda/<kk>/<key>/<name>`, at most 256 MiB a file and 4 GiB in all; anything
/// else fails the import before anything is published.
/// Throws CacheError naming the archive and the offending member.
CK_API ArchiveSummary import_entries(const EntryStore& store, const std::filesystem::path& archive);

}  // namespace ck
