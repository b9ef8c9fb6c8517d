// BuildPlanner: plan_build's work, in four files by what is planned (see
// the sections below); planning reads and decides, and writes nothing.
#pragma once

#include "builder/build_plan.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "cunumpy_kernels/error.hpp"
#include "host/cunumpy_entry.hpp"
#include "host/cunumpy_names.hpp"
#include "host/host_planner.hpp"
#include "host/in_place_record.hpp"
#include "host/module_scan.hpp"

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace ck {

class BuildPlanner {
public:
    explicit BuildPlanner(const BuildRequest& request) { plan_.request = request; }

    /// Plans the request as plan_build does; once per planner (the plan is moved out).
    BuildPlan plan();

private:
    const BuildRequest& request() const { return plan_.request; }
    const Config& config() const { return plan_.request.config; }

    bool may_start_tools() const { return request().start_tools || !request().dry_run; }

    // Whether a build may write to the root: whether planning queues writes for it.
    static bool may_write(const CacheContext& context) { return context.read_only.empty(); }

    // plan_cache_roots.cpp: each cache root set up once, its hits counted and checked

    CacheContext& context_for(const KernelSource& kernel);
    CacheContext& context_named(const std::string& name);

    // A cache folder given explicitly that exists but cannot be written still
    // serves its hits: a warm shared cache on a read-only file system.
    // Planning looks where the build will write, creating nothing.
    CacheLocation writable_location(const std::string& name, std::string& read_only);

    // The warnings added since `count`, taken out to be added again later in
    // the order a plan made on one thread adds them.
    std::vector<std::string> take_warnings_since(std::size_t count);

    // A hit whose entry other users can write is reported failed, never used.
    bool refuse_writable_entry(CacheContext& context, const JobResult& hit, const std::vector<std::string>& files);

    // `store`: the context's own, or the unwritable preferred root it also reads.
    bool refuse_writable_entry(CacheContext& context, const EntryStore& store, const JobResult& hit,
                               const std::vector<std::string>& files);
    void count_hit(CacheContext& context, const std::string& kind, const std::string& module, const std::string& target,
                   const std::string& key);

    // plan_cuda.cpp: the CUDA kernels

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

    // One kernel's CUDA jobs, read apart from the plan (see plan()).
    struct CudaPlanning {
        const KernelSource* kernel = nullptr;
        CacheContext* context = nullptr;
        std::vector<std::string> warnings;  ///< what setting its root up warned, added in the plan's order
        std::vector<CudaJob> jobs;
        std::optional<std::string> unreadable;  ///< the source or a header cannot be read
        std::exception_ptr error;               ///< anything else planning threw, rethrown where it would have been

        void run()
        {
            try {
                if (context->planner)
                    jobs = context->planner->plan(*kernel);
                else if (context->reader)
                    context->reader->read_kernel(*kernel);
            } catch (const SourceError& e) {
                unreadable = e.what();
            } catch (...) {
                error = std::current_exception();
            }
        }
    };

    // Each CUDA kernel with its cache root, the root's compiler set up: what
    // may start a tool or warn happens here, on this thread.
    std::vector<CudaPlanning> cuda_plannings();
    void add_cuda(std::vector<CudaPlanning>& plannings);
    static CudaJob unplanned_job(const KernelSource& kernel, const std::string& target);

    // Every target of a kernel whose source or a header cannot be read fails;
    // the other kernels go on.
    void fail_unreadable(const KernelSource& kernel, const std::string& why);
    void warn_about_includes(const KernelSource& kernel, const CudaJob& job);
    static std::string explain_miss(const CudaMiss& miss);

    // plan_host.cpp: the host modules (Pyccel)

    // One cache root's host modules, read beside the CUDA kernels (see plan()).
    struct HostPlanning {
        CacheContext* context = nullptr;
        std::vector<std::string> warnings;  ///< what setting the root up warned, added in the plan's order
        std::exception_ptr error;
    };

    // In place, the modules are planned when added, as before: one plan over
    // the whole tree, not per root.
    std::vector<HostPlanning> host_plannings();
    void add_host(std::vector<HostPlanning>& plannings);
    static std::string top_package_of(const PythonModuleFile& module);
    void plan_host(CacheContext& context, HostPlanOptions options);

    // Sets the root's host toolchain up and plans its modules' builds; adds
    // nothing to the plan, so that it may run beside the CUDA side's reading.
    void read_host(CacheContext& context, HostPlanOptions options);

    // What the cache holds for each planned module: read here, beside the
    // CUDA side's reading, so that adding the plan only decides.
    static std::vector<HostEntryState> read_host_entries(const CacheContext& context);
    void add_host_plan(CacheContext& context, bool in_place);
    static JobResult unplanned_host(const KernelSource& kernel, const std::string& why);

    // A hit (our entry, or cunumpy's own build where its key covers every
    // input), a module that cannot be built, or a miss.
    void classify_host(CacheContext& context, std::size_t index);

    // For status: what is wrong with cunumpy's name and what fixes it.
    static std::string name_advice(const CunumpyNameHolder& holder);

    // A build of another package re-pointed the name: re-pointing it back
    // hands the other module this one's build, which must not pass silently.
    void warn_if_taken(const CacheContext& context, std::size_t index, const CunumpyNameHolder& holder);

    // Our entry exists: the build makes cunumpy's name point at it.
    void repoint_cunumpy_entry(CacheContext& context, std::size_t index);
    static JobResult cunumpy_hit(const HostPlan& plan, std::size_t index, const CacheContext& context,
                                 const CunumpyEntry& named);
    static std::string explain_host_miss(const CacheContext& context, std::size_t index);

    // plan_in_place.cpp: host modules built in the user's tree

    // In place, every module lives in the user's tree: one plan for all of
    // them; the first cache root serves only as scratch space and remembers
    // failures for status.
    void plan_in_place();
    std::vector<PythonModuleFile> in_place_extra_modules() const;

    // An in-place module: current (our record names its key), foreign and
    // kept (another tool built it, newer than its sources), or a miss.
    struct InPlaceVerdict {
        JobResult hit;  // state hit, when not a miss
        bool miss = false;
        std::string reason;  // of a miss
    };
    void classify_in_place(CacheContext& context);

    // The whole record is read only for a stale module: hits need its first line only.
    static std::string explain_in_place_change(const HostModule& module, const HostJob& job);
    InPlaceVerdict in_place_verdict(CacheContext& context, std::size_t index);

    BuildPlan plan_;
    bool cunumpy_warned_ = false;
    bool compiler_warned_ = false;
};

}  // namespace ck
