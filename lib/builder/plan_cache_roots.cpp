// CacheRoots: each cache root set up once, planning nothing it would write
// (PlannedWrites), and the hits it serves counted and checked.
#include "builder/plan_cache_roots.hpp"

namespace ck {

namespace fs = std::filesystem;

CacheContext& CacheRoots::context_for(const KernelSource& kernel)
{
    return context_named(cache_name_of(config(), kernel.top_package));
}

CacheContext& CacheRoots::context_named(const std::string& name)
{
    auto it = plan_.contexts.find(name);
    if (it != plan_.contexts.end()) return *it->second;
    std::string read_only;
    CacheLocation location = writable_location(name, read_only);
    if (location.fallback)
        plan_.warnings.push_back("cache " + location.preferred.string() + " is not writable; using " +
                                 location.root.string() + " (as cunumpy's PyccelCache does)");
    // The preferred root's tool answers hold for the fallback too (the same tools).
    std::optional<fs::path> probes_also;
    if (location.fallback) probes_also = location.preferred / ".probes";
    auto context = std::make_unique<CacheContext>(CacheContext{location,
                                                               EntryStore(location.root),
                                                               ToolProbe(location.root / ".probes", probes_also),
                                                               nullptr,
                                                               nullptr,
                                                               nullptr,
                                                               std::nullopt,
                                                               read_only,
                                                               "",
                                                               false,
                                                               {},
                                                               0,
                                                               {}});
    context->probe.defer_writes();
    // Like cunumpy, builds already in the unwritable preferred root are used.
    if (location.fallback) context->also_read.emplace(location.preferred);
    if (std::string problem = other_writable_problem(location.root); !problem.empty()) {
        if (!request().dry_run) throw CacheError(problem);
        plan_.warnings.push_back(problem);
    }
    CacheContext& added = *plan_.contexts.emplace(name, std::move(context)).first->second;
    if (may_write(added)) plan_.writes.roots.push_back(&added);
    return added;
}

CacheLocation CacheRoots::writable_location(const std::string& name, std::string& read_only)
{
    CacheLocation location = planned_cache_location(name, config().cache_dir);
    if (request().dry_run) return location;
    std::string problem = unwritable_cache_problem(location, config().cache_dir);
    if (problem.empty()) return location;
    std::error_code ignored;
    if (!config().cache_dir || !fs::is_directory(*config().cache_dir, ignored)) throw CacheError(problem);
    read_only = problem;
    return location;
}

std::vector<std::string> CacheRoots::take_warnings_since(std::size_t count)
{
    auto first = plan_.warnings.begin() + static_cast<std::ptrdiff_t>(count);
    std::vector<std::string> taken(std::make_move_iterator(first), std::make_move_iterator(plan_.warnings.end()));
    plan_.warnings.erase(first, plan_.warnings.end());
    return taken;
}

bool CacheRoots::refuse_writable_entry(CacheContext& context, const JobResult& hit,
                                       const std::vector<std::string>& files)
{
    return refuse_writable_entry(context, context.store, hit, files);
}

bool CacheRoots::refuse_writable_entry(CacheContext& context, const EntryStore& store, const JobResult& hit,
                                       const std::vector<std::string>& files)
{
    std::vector<fs::path> paths(files.begin(), files.end());
    paths.emplace_back("manifest.json");  // it names the artifacts and their checksums
    std::string problem = other_writable_problem(store.root(), hit.entry, paths, context.cleared_folders.get());
    if (problem.empty()) return false;
    JobResult refused = hit;
    refused.state = JobState::failed;
    refused.log = problem;
    plan_.decided.push_back(std::move(refused));
    return true;
}

void CacheRoots::count_hit(CacheContext& context, const std::string& kind, const std::string& module,
                           const std::string& target, const std::string& key)
{
    ++context.hits;
    if (may_write(context)) plan_.writes.hits.push_back({&context, kind, module, target, key, ""});
}

}  // namespace ck
