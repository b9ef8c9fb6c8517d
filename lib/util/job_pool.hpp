// Runs N independent jobs on a fixed number of worker threads. Jobs are
// handed out in index order, so the longest-known jobs can be put first.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

namespace ck {

/// The parallel jobs asked for (`--jobs`, the `jobs` key, an API argument),
/// else one per core; at least 1.
int job_count(std::optional<int> asked);

class JobPool {
public:
    /// `workers` < 1 is taken as 1.
    explicit JobPool(int workers);

    /// Calls `job(i)` once for each i in [0, count), at most `workers` at a
    /// time, and returns when all have returned. `job` must not throw: report
    /// failures through its own results.
    void run(std::size_t count, const std::function<void(std::size_t)>& job) const;

    int workers() const { return workers_; }

private:
    int workers_;
};

}  // namespace ck
