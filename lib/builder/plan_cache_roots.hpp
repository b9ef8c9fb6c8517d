// CacheRoots: each cache root of a plan set up once, planning nothing it
// would write (PlannedWrites), and the hits it serves counted and checked.
#pragma once

#include "builder/plan_part.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ck {

class CacheRoots : PlanPart {
public:
    explicit CacheRoots(BuildPlan& plan) : PlanPart(plan) {}

    /// The cache root of `kernel`'s top-level package, set up on first use.
    CacheContext& context_for(const KernelSource& kernel);
    /// The cache root of cache name `name`, set up on first use: located
    /// (the fallback warned about), its tool answers opened, nothing created.
    /// Throws CacheError for a root others may write (a warning in a dry run).
    CacheContext& context_named(const std::string& name);

    /// Whether a build may write to the root: whether planning queues writes for it.
    static bool may_write(const CacheContext& context) { return context.read_only.empty(); }

    /// The warnings added since `count`, taken out to be added again later in
    /// the order a plan made on one thread adds them.
    std::vector<std::string> take_warnings_since(std::size_t count);

    /// A hit whose entry other users can write is reported failed, never
    /// used: true when `hit` was refused so (and added to the plan).
    bool refuse_writable_entry(CacheContext& context, const JobResult& hit, const std::vector<std::string>& files);
    /// As above for `store`: the context's own, or the unwritable preferred root it also reads.
    bool refuse_writable_entry(CacheContext& context, const EntryStore& store, const JobResult& hit,
                               const std::vector<std::string>& files);

    /// Counts a hit of the root, and queues its use stamp when the root may be written.
    void count_hit(CacheContext& context, const std::string& kind, const std::string& module, const std::string& target,
                   const std::string& key);

private:
    // A cache folder given explicitly that exists but cannot be written still
    // serves its hits: a warm shared cache on a read-only file system.
    // Planning looks where the build will write, creating nothing.
    CacheLocation writable_location(const std::string& name, std::string& read_only);
};

}  // namespace ck
