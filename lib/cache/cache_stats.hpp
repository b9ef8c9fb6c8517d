// Hits and misses, kept without a file that every process rewrites: each
// process that counted something adds one file of its own to `<root>/.stats/`
// when it is done, and `cache info` folds those files into `total.json` under
// a lock (ccache keeps sharded counters for the same reason).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>

namespace ck {

/// How often entries served and how often a compile was needed.
struct CacheCounters {
    std::uint64_t build_hits = 0;    ///< `build` jobs whose entry was already published
    std::uint64_t build_misses = 0;  ///< `build` jobs compiled (built or failed)
    std::uint64_t load_hits = 0;     ///< runtime loads of a cubin or PTX from an entry
    std::uint64_t load_misses = 0;   ///< runtime compiles (NVRTC) because no entry fitted

    CacheCounters& operator+=(const CacheCounters& other);
    bool empty() const { return build_hits + build_misses + load_hits + load_misses == 0; }
};

/// `counters` as the statistics files hold them: {"build_hits", "build_misses", "load_hits", "load_misses"}.
nlohmann::json to_json(const CacheCounters& counters);

/// The counters of a statistics file's JSON; a counter that is missing or not
/// a non-negative integer (a damaged file) counts 0. Never throws.
CacheCounters counters_from_json(const nlohmann::json& j);

/// `<root>/.stats/`: one file per process that counted something, and the folded `total.json`.
std::filesystem::path statistics_folder(const std::filesystem::path& root);

/// Adds `counters` to the cache's statistics: one new file, written whole and
/// renamed into place. Best effort: a cache that cannot be written counts
/// nothing, and no error reaches the caller.
void add_counters(const std::filesystem::path& root, const CacheCounters& counters) noexcept;

}  // namespace ck
