// Folding and zeroing a cache's statistics (`cache info`): the per-process
// files lib/cache/cache_stats.cpp writes are summed into `total.json` under a
// lock, so they do not pile up.
#include "cache_admin/cache_maintenance.hpp"
#include "util/json_text.hpp"
#include "cache/cache_stats.hpp"
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

const char* const total_file = "total.json";

json read_json(const fs::path& path)
{
    try {
        json j = util::parse_json(util::read_file(path), nullptr, false);
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

CacheStatistics read_statistics(const EntryStore& store)
{
    fs::path folder = statistics_folder(store.root());
    FoldLock lock(folder);
    json total = read_json(folder / total_file);
    json since = total.value("since", json());
    CacheStatistics statistics{counters_from_json(total), since.is_string() ? since.get<std::string>() : ""};
    std::vector<fs::path> files = process_files(folder);
    for (const auto& file : files) statistics.counters += counters_from_json(read_json(file));
    if (!lock.held() || files.empty()) return statistics;
    try {
        json folded = to_json(statistics.counters);
        folded["since"] = statistics.since;
        util::replace_file_atomically(folder / total_file, util::json_text(folded) + "\n");
        std::error_code ignored;
        for (const auto& file : files) fs::remove(file, ignored);
    } catch (const Error&) {
        // Folding is housekeeping: the sum above stands.
    }
    return statistics;
}

void zero_statistics(const EntryStore& store)
{
    fs::path folder = statistics_folder(store.root());
    FoldLock lock(folder);
    if (!lock.held()) throw CacheError("cannot lock " + (folder / ".lock").string() + " to zero the statistics");
    std::vector<fs::path> files = process_files(folder);
    json zero = to_json(CacheCounters{});
    zero["since"] = util::utc_now();
    util::replace_file_atomically(folder / total_file, util::json_text(zero) + "\n");
    std::error_code ignored;
    for (const auto& file : files) fs::remove(file, ignored);
}

}  // namespace ck
