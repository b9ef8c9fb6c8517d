#include "cache/cache_stats.hpp"
#include "util/json_text.hpp"
#include "cache/cache.hpp"

#include "util/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/utc_time.hpp"

#include <nlohmann/json.hpp>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A counter that is not a non-negative integer (a damaged file) counts 0.
std::uint64_t counter(const json& j, const char* name)
{
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return 0;
    return it->get<std::uint64_t>();
}

}  // namespace

json to_json(const CacheCounters& c)
{
    return {{"build_hits", c.build_hits},
            {"build_misses", c.build_misses},
            {"load_hits", c.load_hits},
            {"load_misses", c.load_misses}};
}

CacheCounters counters_from_json(const json& j)
{
    return {counter(j, "build_hits"), counter(j, "build_misses"), counter(j, "load_hits"), counter(j, "load_misses")};
}

fs::path statistics_folder(const fs::path& root) { return root / ".stats"; }

CacheCounters& CacheCounters::operator+=(const CacheCounters& other)
{
    build_hits += other.build_hits;
    build_misses += other.build_misses;
    load_hits += other.load_hits;
    load_misses += other.load_misses;
    return *this;
}

void add_counters(const fs::path& root, const CacheCounters& counters) noexcept
{
    if (counters.empty()) return;
    try {
        fs::path folder = statistics_folder(root);
        std::error_code error;
        fs::create_directories(folder, error);
        if (error) return;
        util::replace_file_atomically(folder / (unique_temporary_name() + ".json"),
                                      util::json_text(to_json(counters)) + "\n");
    } catch (...) {
        // Statistics never fail a build or a load.
    }
}

}  // namespace ck
