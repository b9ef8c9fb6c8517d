// CudaKernelsPlanner: the CUDA kernels of a plan, their compiler set up per
// cache root, read on a second thread and added to the plan in one thread's order.
#pragma once

#include "builder/plan_cache_roots.hpp"
#include "builder/plan_part.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "cunumpy_kernels/error.hpp"

#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace ck {

class CudaKernelsPlanner : PlanPart {
public:
    CudaKernelsPlanner(BuildPlan& plan, CacheRoots& roots) : PlanPart(plan), roots_(roots) {}

    /// One kernel's CUDA jobs, read apart from the plan (see BuildPlanner::plan).
    struct Reading {
        const KernelSource* kernel = nullptr;
        CacheContext* context = nullptr;
        std::vector<std::string> warnings;  ///< what setting its root up warned, added in the plan's order
        std::vector<CudaJob> jobs;
        std::optional<std::string> unreadable;  ///< the source or a header cannot be read
        std::exception_ptr error;               ///< anything else planning threw, rethrown where it would have been

        /// Plans the jobs (or, keys unknown, reads the sources): safe on another thread.
        void run();
    };

    /// Each CUDA kernel with its cache root, the root's compiler set up: what
    /// may start a tool or warn happens here, on the calling thread. Throws
    /// ToolchainError when a compiler is needed and cannot be found.
    std::vector<Reading> readings();

    /// Adds what `readings` found: hits, failures and misses, each miss with
    /// its reason. Rethrows what a reading threw; throws UsageError for a
    /// variable the compiler would read unkeyed.
    void add(std::vector<Reading>& readings);

private:
    // The CUDA side of a cache root, set up on first use: a host-only build
    // loads no CUDA compiler and needs no toolkit.
    CacheContext& cuda_context_for(const KernelSource& kernel);

    // Without tools (status), the compiler's identity and cunumpy's folder
    // come from the probe records only; what is missing makes misses unknown.
    void plan_with_tools(CacheContext& context);

    // Keys need the compiler's identity; reading the sources does not, and a
    // header not found is a failure whatever the key would be.
    void keep_a_reader(CacheContext& context, const CunumpyDirResolver& resolver);

    // Once per build: what the key takes on trust or what the build ignores.
    void warn_about_compiler_inputs(const CudaPlanner& planner, const CompilerEnvironment& environment);

    static CudaJob unplanned_job(const KernelSource& kernel, const std::string& target);

    // Every target of a kernel whose source or a header cannot be read fails;
    // the other kernels go on.
    void fail_unreadable(const KernelSource& kernel, const std::string& why);
    void warn_about_includes(const KernelSource& kernel, const CudaJob& job);
    static std::string explain_miss(const CudaMiss& miss);

    CacheRoots& roots_;
    bool cunumpy_warned_ = false;
    bool compiler_warned_ = false;
};

}  // namespace ck
