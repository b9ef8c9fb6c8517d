// BuildPlanner: plan_build's work, in four parts by what is planned (cache
// roots, CUDA kernels, host modules, in-place modules); planning reads and
// decides, and writes nothing.
#pragma once

#include "builder/build_plan.hpp"
#include "builder/plan_cache_roots.hpp"
#include "builder/plan_cuda.hpp"
#include "builder/plan_host.hpp"
#include "builder/plan_in_place.hpp"

namespace ck {

class BuildPlanner {
public:
    explicit BuildPlanner(const BuildRequest& request) { plan_.request = request; }
    BuildPlanner(const BuildPlanner&) = delete;  // the parts hold plan_
    BuildPlanner& operator=(const BuildPlanner&) = delete;

    /// Plans the request as plan_build does; once per planner (the plan is moved out).
    BuildPlan plan();

private:
    BuildPlan plan_;
    CacheRoots roots_{plan_};
    CudaKernelsPlanner cuda_{plan_, roots_};
    HostModulesPlanner host_{plan_, roots_};
    InPlacePlanner in_place_{plan_, roots_, host_};
};

}  // namespace ck
