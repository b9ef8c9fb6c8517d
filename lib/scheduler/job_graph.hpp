// Runs jobs that depend on other jobs (a Pyccel module is compiled after the
// modules it imports) on a fixed number of worker threads. Independent jobs
// (CUDA compiles) are simply jobs without dependencies in the same graph, so
// one pool bounds all compiles of a build.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace ck {

/// dependencies[i] lists the jobs that must succeed before job i starts.
using JobDependencies = std::vector<std::vector<std::size_t>>;

class JobGraph {
public:
    /// `workers` < 1 is taken as 1.
    explicit JobGraph(int workers);

    /// Calls `job(i)` for each i in [0, dependencies.size()) once every job in
    /// dependencies[i] has returned true, at most `workers` at a time, and
    /// returns when every job has run or been skipped. A job that returns false
    /// has failed: the jobs that depend on it, directly or through others, do
    /// not run; `skipped(i, failed)` is called for each instead, naming a
    /// failed job it waited for. Among ready jobs, those heading the longest
    /// chain of dependants start first (ties: lower index first), so the
    /// critical path is not left for last.
    ///
    /// `job` and `skipped` must not throw. Throws std::invalid_argument, before
    /// running anything, when a dependency index is out of range or the
    /// dependencies form a cycle.
    void run(const JobDependencies& dependencies, const std::function<bool(std::size_t)>& job,
             const std::function<void(std::size_t, std::size_t)>& skipped) const;

    int workers() const { return workers_; }

private:
    int workers_;
};

/// The time of the longest chain of dependent jobs: the most, over every
/// path through `dependencies`, of the sum of `seconds` along it (seconds[i]
/// is job i's time). With the sum of all job times divided by the workers, it
/// makes the bound on the wall time a list scheduler such as JobGraph
/// guarantees (Graham, "Bounds on multiprocessing timing anomalies", 1969).
/// Throws std::invalid_argument when the sizes differ, an index is out of
/// range or the dependencies form a cycle.
double longest_path(const JobDependencies& dependencies, const std::vector<double>& seconds);

/// The jobs of a cycle in `dependencies` (in dependency order, the first
/// repeated at the end), or an empty list when there is none.
std::vector<std::size_t> find_cycle(const JobDependencies& dependencies);

/// The jobs of a cycle that job `start` is in or depends on, directly or
/// not (as find_cycle), or an empty list when it depends on none.
std::vector<std::size_t> find_cycle_from(const JobDependencies& dependencies, std::size_t start);

/// A shortest cycle through job `job` (`job` first and last, in dependency
/// order), or an empty list when `job` is in none.
std::vector<std::size_t> find_cycle_through(const JobDependencies& dependencies, std::size_t job);

}  // namespace ck
