// InPlacePlanner: host modules built in the user's tree (--in-place), one
// plan over the whole tree.
#include "builder/plan_in_place.hpp"

#include "host/in_place_job.hpp"
#include "cache/in_place_record.hpp"
#include "host/pyccel_workspace.hpp"
#include "util/text.hpp"

namespace ck {

namespace fs = std::filesystem;

void InPlacePlanner::plan()
{
    CacheContext* context = nullptr;
    std::vector<const KernelSource*> kernels;
    for (const auto& kernel : plan_.kernels) {
        if (!pyccel_can_build(kernel.name)) continue;  // the walk warned
        kernels.push_back(&kernel);
        if (!context) context = &roots_.context_for(kernel);
    }
    std::vector<PythonModuleFile> extra = extra_modules();
    if (kernels.empty() && extra.empty()) return;
    if (!context) context = &roots_.context_named(cache_name_of(config(), top_package_of(extra.front())));
    context->host.kernels = std::move(kernels);
    host_.read(*context, HostPlanOptions{std::move(extra), true});
    if (host_.admit(*context)) classify(*context);
}

std::string InPlacePlanner::top_package_of(const PythonModuleFile& module)
{
    fs::path relative = module.file.lexically_relative(module.source_root);
    return relative.has_parent_path() ? relative.begin()->string() : relative.stem().string();
}

std::vector<PythonModuleFile> InPlacePlanner::extra_modules() const
{
    std::vector<fs::path> trees = request().paths;
    if (trees.empty()) trees.push_back(fs::current_path());
    std::vector<PythonModuleFile> modules = find_suffix_modules(trees, config().host_suffix);
    for (const auto& file : config().in_place_modules) modules.push_back(python_module_file(file));
    return modules;
}

void InPlacePlanner::classify(CacheContext& context)
{
    const HostPlan& plan = context.host.plan;
    std::vector<Verdict> verdicts;
    for (std::size_t i = 0; i < plan.modules.size(); ++i) verdicts.push_back(verdict(context, i));
    // A build links the objects of the modules it imports: it never links another tool's.
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        if (!verdicts[i].miss) continue;
        for (std::size_t imported : plan.jobs[i].closure) {
            if (verdicts[imported].miss || verdicts[imported].hit.foreign.empty()) continue;
            verdicts[imported] = {
                {}, true, "built by another tool, and " + plan.modules[i].name + ", which imports it, is rebuilt"};
        }
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        kept += verdicts[i].miss || verdicts[i].hit.foreign.empty() ? 0 : 1;
        if (verdicts[i].miss) {
            plan_.host_misses.push_back(HostMiss{&context, i, verdicts[i].reason});
            continue;
        }
        if (verdicts[i].hit.state == JobState::hit) ++context.hits;
        plan_.decided.push_back(std::move(verdicts[i].hit));
    }
    if (kept > 0)
        plan_.warnings.push_back(util::counted(kept, "in-place build") +
                                 " of another tool kept (newer than their sources, inputs unknown): "
                                 "`status --in-place` lists them, `build --in-place --replace-foreign` "
                                 "rebuilds them");
}

std::string InPlacePlanner::explain_change(const HostModule& module, const HostJob& job)
{
    auto record = read_in_place_record(in_place_record_path(module.file.parent_path(), module_stem(module)));
    return record ? describe_host_change(record->inputs, job.inputs) : "";
}

InPlacePlanner::Verdict InPlacePlanner::verdict(CacheContext& context, std::size_t index)
{
    const HostPlan& plan = context.host.plan;
    const HostModule& module = plan.modules[index];
    const HostJob& job = plan.jobs[index];
    Verdict verdict;
    verdict.hit = in_place_base_result(plan, index);
    if (!module.problem.empty()) {
        verdict.hit.log = module.problem;
        plan_.writes.failures.push_back({&context, "in-place", verdict.hit.module, "host", job.key, module.problem});
        return verdict;
    }
    std::vector<fs::path> sources = {module.file};
    for (std::size_t imported : job.closure) sources.push_back(plan.modules[imported].file);
    const std::string& ext_suffix = context.host.setup.tools.ext_suffix;
    InPlaceState state =
        read_in_place_state(module.file.parent_path(), module_stem(module), ext_suffix, job.key, sources);
    verdict.hit.state = JobState::hit;
    verdict.hit.artifacts = {module.file.parent_path() / (module_stem(module) + ext_suffix)};
    using Kind = InPlaceState::Kind;
    if (state.kind == Kind::current) return verdict;
    if (state.kind == Kind::foreign && !state.older_than_sources && !request().replace_foreign) {
        verdict.hit.foreign =
            "built by another tool (no record of ours beside it), newer than its sources; kept "
            "(`build --in-place --replace-foreign` rebuilds it)";
        return verdict;
    }
    verdict.miss = true;
    if (state.kind == Kind::missing)
        verdict.reason = "no entry";
    else if (state.kind == Kind::incomplete)
        verdict.reason = state.missing_file + " of its build is missing";
    else if (state.kind == Kind::damaged)
        verdict.reason = state.record->library + " of its build changed since (damaged or replaced)";
    else if (state.kind == Kind::foreign)
        verdict.reason = state.older_than_sources
                             ? "built by another tool (no record of ours beside it), older than its sources"
                             : "built by another tool (no record of ours beside it; --replace-foreign)";
    else if (state.record->key.empty())
        verdict.reason = "an earlier in-place build was interrupted";
    else
        verdict.reason = explain_change(module, job);
    if (verdict.reason.empty()) verdict.reason = "built with another key";
    return verdict;
}

}  // namespace ck
