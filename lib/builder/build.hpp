// `build`: compile every kernel's artifacts that the cache lacks, in parallel,
// and publish each as a cache entry.
#pragma once

#include "cache/cache.hpp"
#include "cache/cache_stats.hpp"
#include "cupy_cache/cupy_cache.hpp"
#include "scheduler/job_result.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// Receives progress; called from worker threads, one call at a time.
class BuildObserver {
public:
    virtual ~BuildObserver() = default;
    /// Called once, before any job runs, with the number of jobs.
    virtual void planned(std::size_t /*jobs*/, std::size_t /*misses*/) {}
    /// A compile of `job` starts (misses only).
    virtual void started(const JobResult& /*job*/) {}
    /// A job is done: hit, built, failed, or would_build under --dry-run.
    virtual void finished(const JobResult& /*job*/) {}
    /// Another builder holds the build lock of a miss: "waiting for
    /// host:pid (since ...), which builds ...", once per lock.
    virtual void waiting(const std::string& /*message*/) {}
    /// A build lock was broken ("broke the build lock ... of host:pid"), as
    /// it happens: also listed in the report's warnings.
    virtual void lock_broken(const std::string& /*message*/) {}
};

/// Knobs of one build run beyond the tree's Config.
struct BuildRequest {
    std::vector<std::filesystem::path> paths;  ///< kernel trees; empty means the current folder
    Config config;                             ///< options, already merged with flags
    bool dry_run = false;                      ///< plan and explain, compile nothing
    /// With dry_run only: false plans without starting a process or loading a
    /// compiler (`status`). The compiler's version and cunumpy's header folder
    /// (and, for host jobs, the Python interpreter's facts and gcc's version)
    /// then come only from the records earlier runs left in the cache
    /// (`.probes/`); a miss whose key needs an answer never recorded is a
    /// would_build job with an empty `key` and a `reason` naming what is
    /// unknown. Hits stay hits: a key that matches an entry is exact.
    bool start_tools = true;
    bool host = true;  ///< build host kernels and the modules they import (Pyccel)
    bool cuda = true;  ///< build CUDA kernels
    /// With `config.in_place`: rebuild in-place extensions that another tool
    /// built (Pyccel, `struphy compile`) even when they are newer than their
    /// sources. Without it such builds are kept, and reported (JobResult::foreign).
    bool replace_foreign = false;
    /// Also fill CuPy's kernel cache as cunumpy's CUDA path would (see
    /// cupy_cache/cupy_fill.hpp), through `config.python`; with dry_run, look its
    /// entries up instead. Jobs of kind "cupy" join the report.
    bool cupy = false;
    /// CUPY_CACHE_DIR for that; unset: CuPy's own (`$CUPY_CACHE_DIR`, else `~/.cupy/kernel_cache`).
    std::optional<std::filesystem::path> cupy_cache_dir{};
};

/// The whole run.
/// How the compiles of a build were scheduled, to compare its wall time with
/// the bound a list scheduler guarantees (job_graph.hpp: longest_path).
struct ScheduleReport {
    int workers = 1;                  ///< `--jobs`: compiles at once
    std::size_t jobs = 0;             ///< scheduled jobs (misses; a kernel's targets compiled together are one)
    double plan_seconds = 0;          ///< from the start to the first compile: walk, keys, cache lookups
    double wall_seconds = 0;          ///< from the first compile's start to the last one's end
    double job_seconds = 0;           ///< the sum of every job's time
    double longest_path_seconds = 0;  ///< the longest chain of jobs that wait for each other (host imports)
    /// job_seconds / workers + longest_path_seconds: wall_seconds stays below it.
    double bound_seconds() const { return job_seconds / workers + longest_path_seconds; }
};

struct BuildReport {
    std::vector<KernelSource> kernels;  ///< every kernel found, ported or not
    std::vector<JobResult> jobs;        ///< sorted by module, then target
    std::vector<std::string> warnings;  ///< walk and cache warnings
    double seconds = 0;
    std::optional<CupyInstallation> cupy;  ///< with BuildRequest::cupy: which CuPy ran, or why none could
    ScheduleReport schedule;               ///< the compiles of this run (none for a dry run or a warm build)

    bool ok() const;  ///< no job failed, and CuPy could be used when asked
    std::size_t count(JobState state) const;
};

/// Runs a build: finds kernels, computes each job's key, publishes every miss.
/// Every job is attempted even when others fail.
///
/// Throws UsageError for bad paths or options, ToolchainError when the selected
/// compiler cannot be loaded and some job needs it, CacheError when no cache
/// root is writable. Per-kernel compile errors do not throw: they are failed
/// jobs with the compiler's log.
BuildReport run_build(const BuildRequest& request, BuildObserver* observer = nullptr);

/// Sends SIGTERM to the compiler processes (nvcc and its children) that builds
/// in this process are running, then removes their scratch folders in TMPDIR
/// (nvcc's `tmpxft_*` files are inside). Async-signal-safe: meant for a SIGINT
/// or SIGTERM handler, so that an interrupted build leaves no compiler running
/// and no temporary folder. Entries being written are left as temporary
/// folders in the cache, which the next build removes (their process is
/// gone), as it removes scratch folders a killed build left. The build locks
/// held are removed (build_lock.hpp), so no builder waits for them.
void stop_compiler_processes() noexcept;

/// Removes what `build --in-place` wrote below `folders` (the files each of
/// its records lists, `__pyccel__/<stem>.cunumpy-kernels.json`, then the
/// record, then `__pyccel__/` folders left empty) and nothing else: builds of
/// another tool stay. Returns the files removed, or with `dry_run` those it
/// would remove. Throws UsageError for a path that is not a folder,
/// CacheError when a file cannot be removed (the files before it are gone).
std::vector<std::filesystem::path> clean_in_place(const std::vector<std::filesystem::path>& folders, bool dry_run);

/// The JSON report of `--json`: {"ok", "seconds", "summary", "warnings",
/// "kernels": [...], "jobs": [...], "schedule": ScheduleReport's fields and
/// "bound_seconds"}, and "cupy" (CupyInstallation's JSON) when CuPy's cache
/// was asked for.
nlohmann::json to_json(const BuildReport& report);

}  // namespace ck
