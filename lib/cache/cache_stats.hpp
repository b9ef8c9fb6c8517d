// Hits and misses, kept without a file that every process rewrites: each
// process that counted something adds one file of its own to `<root>/.stats/`
// when it is done, and `cache info` folds those files into `total.json` under
// a lock (ccache keeps sharded counters for the same reason).
#pragma once

#include "cache/cache_maintenance.hpp"

#include <filesystem>

namespace ck {

/// Adds `counters` to the cache's statistics: one new file, written whole and
/// renamed into place. Best effort: a cache that cannot be written counts
/// nothing, and no error reaches the caller.
void add_counters(const std::filesystem::path& root, const CacheCounters& counters) noexcept;

}  // namespace ck
