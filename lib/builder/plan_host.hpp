// HostModulesPlanner: the host modules (Pyccel) of a plan's cache roots,
// their entries and cunumpy's names for them.
#pragma once

#include "builder/plan_cache_roots.hpp"
#include "builder/plan_part.hpp"
#include "host/cunumpy_entry.hpp"
#include "host/cunumpy_names.hpp"
#include "host/host_planner.hpp"

#include <cstddef>
#include <exception>
#include <string>
#include <vector>

namespace ck {

class HostModulesPlanner : PlanPart {
public:
    HostModulesPlanner(BuildPlan& plan, CacheRoots& roots) : PlanPart(plan), roots_(roots) {}

    /// One cache root's host modules, read beside the CUDA kernels (see BuildPlanner::plan).
    struct Reading {
        CacheContext* context = nullptr;
        std::vector<std::string> warnings;  ///< what setting the root up warned, added in the plan's order
        std::exception_ptr error;
    };

    /// Each cache root's modules planned and their entries read, adding
    /// nothing to the plan (safe beside the CUDA side's reading).
    std::vector<Reading> readings();

    /// Adds what `readings` found: hits, failures and misses. Rethrows what
    /// a reading threw; throws ToolchainError when host builds cannot run
    /// here and tools may be started (status lists the modules instead).
    void add(std::vector<Reading>& readings);

    /// Sets the root's host toolchain up and plans its modules' builds
    /// (`options`: in place, more modules); adds nothing to the plan.
    void read(CacheContext& context, HostPlanOptions options);

    /// Adds the root's setup warning; when host builds cannot run here, adds
    /// each kernel as unplanned (or throws as `add` does) and returns false.
    bool admit(CacheContext& context);

private:
    // What the cache holds for each planned module: read here, beside the
    // CUDA side's reading, so that adding the plan only decides.
    static std::vector<HostEntryState> read_entries(const CacheContext& context);
    static JobResult unplanned_host(const KernelSource& kernel, const std::string& why);

    // A hit (our entry, or cunumpy's own build where its key covers every
    // input), a module that cannot be built, or a miss.
    void classify(CacheContext& context, std::size_t index);

    // For status: what is wrong with cunumpy's name and what fixes it.
    static std::string name_advice(const CunumpyNameHolder& holder);

    // A build of another package re-pointed the name: re-pointing it back
    // hands the other module this one's build, which must not pass silently.
    void warn_if_taken(const CacheContext& context, std::size_t index, const CunumpyNameHolder& holder);

    // Our entry exists: the build makes cunumpy's name point at it.
    void repoint_cunumpy_entry(CacheContext& context, std::size_t index);
    static JobResult cunumpy_hit(const HostPlan& plan, std::size_t index, const CacheContext& context,
                                 const CunumpyEntry& named);
    static std::string explain_miss(const CacheContext& context, std::size_t index);

    CacheRoots& roots_;
};

}  // namespace ck
