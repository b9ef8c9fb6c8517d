// Planning a build: walk the trees, compute every job's key, and sort the
// jobs into those decided now (hits, and jobs that cannot run) and misses.
// `build` runs the misses (build_runner.cpp); `build --dry-run`, `status` and
// `cache path` show the plan as it is (preview_build).
#pragma once

#include "builder/build.hpp"
#include "host/host_setup.hpp"
#include "cache/cache.hpp"
#include "host/cunumpy_entry.hpp"
#include "source/source_record.hpp"
#include "cache/write_access.hpp"
#include "compilers/cuda_compiler.hpp"
#include "compilers/tool_probe.hpp"
#include "cuda_job/cuda_job.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "host/host_planner.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ck {

/// The host modules of one cache root: their setup and plan.
/// What a cache holds for one planned host module, read while planning.
struct HostEntryState {
    CunumpyEntry cunumpy_name;  ///< what cunumpy's own name for the build points at
    bool has_entry = false;     ///< the entry of the module's key, with its artifact
};

struct HostContext {
    HostSetup setup;
    std::vector<const KernelSource*> kernels;
    HostPlan plan;
    std::vector<HostEntryState> entries;  ///< per module of `plan`; empty in place
};

/// One cache root with what builds into it.
struct CacheContext {
    CacheLocation location;
    EntryStore store;
    ToolProbe probe;
    std::unique_ptr<CudaCompiler> compiler;
    std::unique_ptr<CudaPlanner> planner;  ///< null when the compiler's identity is unknown (see `unknown`)
    /// When `planner` is null: reads sources only, so a kernel whose source
    /// or header cannot be read is known failed though its keys are unknown.
    std::unique_ptr<CudaPlanner> reader;
    std::optional<EntryStore> also_read;  ///< the unwritable preferred root, still searched for hits
    std::string read_only;                ///< why nothing can be published here, when so
    std::string unknown;                  ///< why keys cannot be computed without starting a tool
    bool cunumpy_dir_unknown = false;     ///< a planned include needed cunumpy's folder, never recorded
    HostContext host;
    std::uint64_t hits = 0;  ///< jobs that found their entry here
    /// Folders of this root found not other-writable (write_access.hpp).
    std::unique_ptr<ClearedFolders> cleared_folders = std::make_unique<ClearedFolders>();
};

/// A CUDA job whose entry is missing, and why.
struct CudaMiss {
    CudaJob job;
    CacheContext* context;
    std::string reason;
};

/// A host module whose build is missing, and why.
struct HostMiss {
    CacheContext* context;
    std::size_t module;  ///< index into context->host.plan
    std::string reason;
};

/// What a build writes before it compiles, decided by planning (which writes
/// nothing, as ninja's Plan) and applied by apply_planned_writes. `status`,
/// `build --dry-run` and `bundle` plan and drop it.
struct PlannedWrites {
    /// A hit or a failure to remember in an entry store (cache.hpp).
    struct Remembered {
        CacheContext* context;
        std::string kind, module, target, key;
        std::string log;  ///< a failure's; empty for a hit
    };
    /// cunumpy's name for a host build, to point at our entry (cunumpy_names.hpp).
    struct CunumpyName {
        CacheContext* context;
        std::string name;
        std::filesystem::path entry;  ///< relative to the cache root
    };
    std::vector<CacheContext*> roots;  ///< to create, tag and sweep of stale temporaries
    std::vector<Remembered> hits;
    std::vector<Remembered> failures;
    std::vector<CunumpyName> cunumpy_names;
};

/// Everything a build decided before compiling. The misses point into
/// `contexts` and into `kernels`: a plan is moved, never copied.
struct BuildPlan {
    BuildRequest request;
    std::vector<KernelSource> kernels;  ///< every kernel found, ported or not
    std::vector<JobResult> decided;     ///< hits, and jobs that failed or cannot be planned
    std::vector<std::string> warnings;
    std::map<std::string, std::unique_ptr<CacheContext>> contexts;  ///< by cache name
    std::vector<CudaMiss> cuda_misses;
    std::vector<HostMiss> host_misses;
    PlannedWrites writes;
    /// What planning read, remembered for the next run (saved when planning
    /// ends); later readings of this run (status's signatures) share it.
    std::shared_ptr<SourceRecord> record;

    BuildPlan() = default;
    BuildPlan(BuildPlan&&) = default;
    BuildPlan& operator=(BuildPlan&&) = default;
    BuildPlan(const BuildPlan&) = delete;
};

/// Plans `request`: finds the kernels, sets up each cache root, computes
/// every key and looks it up. Writes nothing: what a build must write before
/// compiling (the roots, hits, failures, cunumpy's names, the tools' answers
/// and what was read of the sources) is in `writes`, the probes and `record`,
/// for apply_planned_writes. With `request.dry_run` it plans as status does
/// (warnings where a build would fail), and with `request.start_tools` false
/// starts no process (see BuildRequest). Throws as run_build does before its
/// first compile.
BuildPlan plan_build(const BuildRequest& request);

/// Does what a build writes before it compiles (see PlannedWrites), best
/// effort but for the roots: throws CacheError when a root cannot be created
/// after all (another process took it away since planning).
void apply_planned_writes(BuildPlan& plan);

/// A miss as the report shows it before compiling: would_build, with its
/// reason (and, when status could not know cunumpy's header folder, no key).
JobResult would_build(const BuildPlan& plan, const CudaMiss& miss);
JobResult would_build(const BuildPlan& plan, const HostMiss& miss);

/// The plan as a report: the decided jobs and every miss as would_build,
/// sorted as run_build sorts. What `build --dry-run` and `status` show.
BuildReport preview_build(const BuildPlan& plan);

/// Sorts a report's jobs by module, then target (the order every report has).
void sort_jobs(BuildReport& report);

}  // namespace ck
