// Hits and misses, kept without a file that every process rewrites: each
// process that counted something adds one file of its own to `<root>/.stats/`
// when it is done, and `cache info` folds those files into `total.json` under
// a lock (ccache keeps sharded counters for the same reason).
#pragma once

#include "cache/cache_maintenance.hpp"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ck {

/// Adds `counters` to the cache's statistics: one new file, written whole and
/// renamed into place. Best effort: a cache that cannot be written counts
/// nothing, and no error reaches the caller.
void add_counters(const std::filesystem::path& root, const CacheCounters& counters) noexcept;

/// What a build counted in one cache, and the entries whose use it recorded
/// (EntryStore::record_use, which `cache prune --max-age` reads): the
/// bookkeeping a build printed again from the answer record repeats, so
/// that `cache info` and prune see what they would have, had it planned.
struct CacheBookkeeping {
    std::filesystem::path root;
    CacheCounters counters;
    std::vector<std::pair<std::string, std::string>> uses;  ///< kind ("cuda", "host") and key of each entry served
};

/// Does `bookkeeping` again: adds its counters and records each use. Best
/// effort, as both are: nothing reaches the caller.
void repeat_bookkeeping(const CacheBookkeeping& bookkeeping) noexcept;

/// `bookkeeping` as JSON, its counters named as in the statistics files.
nlohmann::json bookkeeping_json(const CacheBookkeeping& bookkeeping);

/// The bookkeeping bookkeeping_json wrote. Throws nlohmann::json::exception
/// when `j` is not of that form.
CacheBookkeeping bookkeeping_from_json(const nlohmann::json& j);

}  // namespace ck
