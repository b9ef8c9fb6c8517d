#include "cache/cache_stats.hpp"

#include "util/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/utc_time.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const stats_folder = ".stats";
const char* const total_file = "total.json";

json to_json(const CacheCounters& c)
{
    return {{"build_hits", c.build_hits}, {"build_misses", c.build_misses}, {"load_hits", c.load_hits},
            {"load_misses", c.load_misses}};
}

// A counter that is not a non-negative integer (a damaged file) counts 0.
std::uint64_t counter(const json& j, const char* name)
{
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return 0;
    return it->get<std::uint64_t>();
}

CacheCounters counters_of(const json& j)
{
    return {counter(j, "build_hits"), counter(j, "build_misses"), counter(j, "load_hits"), counter(j, "load_misses")};
}

json read_json(const fs::path& path)
{
    try {
        json j = json::parse(util::read_file(path), nullptr, false);
        return j.is_object() ? j : json::object();
    } catch (const Error&) {
        return json::object();
    }
}

// The per-process files: every `.json` but the total (temporary files start with a dot).
std::vector<fs::path> process_files(const fs::path& folder)
{
    std::vector<fs::path> files;
    std::error_code error;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        std::string name = it->path().filename().string();
        if (name[0] != '.' && name != total_file && it->path().extension() == ".json") files.push_back(it->path());
    }
    return files;
}

// An exclusive lock on `.stats/.lock` while folding or zeroing; none when the folder cannot be written.
class FoldLock {
public:
    // Never creates the cache root (a mistyped --cache-dir stays absent); a
    // lock file another member of a group created opens read-only, which flock
    // needs; without blocking, should it be a FIFO.
    explicit FoldLock(const fs::path& folder)
    {
        std::error_code error;
        if (!fs::is_directory(folder.parent_path(), error)) return;
        fs::create_directory(folder, error);
        fd_ = util::UniqueFd(::open((folder / ".lock").c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666));
        held_ = fd_.valid() && ::flock(fd_.get(), LOCK_EX) == 0;
    }
    bool held() const { return held_; }

private:
    util::UniqueFd fd_;
    bool held_ = false;
};

}  // namespace

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
        fs::path folder = root / stats_folder;
        std::error_code error;
        fs::create_directories(folder, error);
        if (error) return;
        util::replace_file_atomically(folder / (unique_temporary_name() + ".json"), to_json(counters).dump() + "\n");
    } catch (...) {
        // Statistics never fail a build or a load.
    }
}

CacheStatistics read_statistics(const EntryStore& store)
{
    fs::path folder = store.root() / stats_folder;
    FoldLock lock(folder);
    json total = read_json(folder / total_file);
    json since = total.value("since", json());
    CacheStatistics statistics{counters_of(total), since.is_string() ? since.get<std::string>() : ""};
    std::vector<fs::path> files = process_files(folder);
    for (const auto& file : files) statistics.counters += counters_of(read_json(file));
    if (!lock.held() || files.empty()) return statistics;
    try {
        json folded = to_json(statistics.counters);
        folded["since"] = statistics.since;
        util::replace_file_atomically(folder / total_file, folded.dump() + "\n");
        std::error_code ignored;
        for (const auto& file : files) fs::remove(file, ignored);
    } catch (const Error&) {
        // Folding is housekeeping: the sum above stands.
    }
    return statistics;
}

void zero_statistics(const EntryStore& store)
{
    fs::path folder = store.root() / stats_folder;
    FoldLock lock(folder);
    if (!lock.held()) throw CacheError("cannot lock " + (folder / ".lock").string() + " to zero the statistics");
    std::vector<fs::path> files = process_files(folder);
    json zero = to_json(CacheCounters{});
    zero["since"] = util::utc_now();
    util::replace_file_atomically(folder / total_file, zero.dump() + "\n");
    std::error_code ignored;
    for (const auto& file : files) fs::remove(file, ignored);
}

}  // namespace ck
