// InPlacePlanner: host modules built in the user's tree (--in-place), one
// plan over the whole tree.
#pragma once

#include "builder/plan_cache_roots.hpp"
#include "builder/plan_host.hpp"
#include "builder/plan_part.hpp"
#include "host/module_scan.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ck {

class InPlacePlanner : PlanPart {
public:
    InPlacePlanner(BuildPlan& plan, CacheRoots& roots, HostModulesPlanner& host)
        : PlanPart(plan), roots_(roots), host_(host)
    {
    }

    /// Plans every module of the tree (the kernels', `*<host-suffix>.py` and
    /// the in-place-modules): the first cache root serves only as scratch
    /// space and remembers failures for status.
    void plan();

private:
    std::vector<PythonModuleFile> extra_modules() const;
    static std::string top_package_of(const PythonModuleFile& module);

    // An in-place module: current (our record names its key), foreign and
    // kept (another tool built it, newer than its sources), or a miss.
    struct Verdict {
        JobResult hit;  // state hit, when not a miss
        bool miss = false;
        std::string reason;  // of a miss
    };
    void classify(CacheContext& context);

    // The whole record is read only for a stale module: hits need its first line only.
    static std::string explain_change(const HostModule& module, const HostJob& job);
    Verdict verdict(CacheContext& context, std::size_t index);

    CacheRoots& roots_;
    HostModulesPlanner& host_;
};

}  // namespace ck
