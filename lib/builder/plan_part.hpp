// What each part of planning shares: the plan it adds to, and the request.
#pragma once

#include "builder/build_plan.hpp"

namespace ck {

/// A part of planning (cache roots, CUDA kernels, host modules, in-place
/// modules): reads, decides and adds to `plan`, writing nothing to disk.
class PlanPart {
protected:
    explicit PlanPart(BuildPlan& plan) : plan_(plan) {}

    const BuildRequest& request() const { return plan_.request; }
    const Config& config() const { return plan_.request.config; }
    /// status plans without starting a compiler or Python; build and
    /// `--dry-run --start-tools` may.
    bool may_start_tools() const { return request().start_tools || !request().dry_run; }

    BuildPlan& plan_;
};

}  // namespace ck
