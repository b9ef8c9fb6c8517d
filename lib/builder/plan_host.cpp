// HostModulesPlanner: the host modules of each cache root (Pyccel), their
// entries and cunumpy's names for them.
#include "builder/plan_host.hpp"

#include "compilers/compiler_environment.hpp"
#include "cunumpy_kernels/error.hpp"
#include "host/host_library.hpp"
#include "host/pyccel_workspace.hpp"

#include <algorithm>

namespace ck {

namespace fs = std::filesystem;

std::vector<HostModulesPlanner::Reading> HostModulesPlanner::readings()
{
    std::vector<Reading> readings;
    std::size_t warned = plan_.warnings.size();
    for (const auto& kernel : plan_.kernels) {
        if (!pyccel_can_build(kernel.name)) continue;  // the walk warned
        CacheContext& context = roots_.context_for(kernel);
        if (context.host.kernels.empty()) readings.push_back(Reading{&context, {}, {}});
        context.host.kernels.push_back(&kernel);
    }
    // Roots set up here warn after the CUDA side's warnings, as in a plan made on one thread.
    if (!readings.empty()) readings.front().warnings = roots_.take_warnings_since(warned);
    for (auto& reading : readings) {
        try {
            read(*reading.context, {});
        } catch (...) {
            reading.error = std::current_exception();
        }
    }
    return readings;
}

void HostModulesPlanner::add(std::vector<Reading>& readings)
{
    for (auto& reading : readings) {
        plan_.warnings.insert(plan_.warnings.end(), reading.warnings.begin(), reading.warnings.end());
        if (reading.error) std::rethrow_exception(reading.error);
        CacheContext& context = *reading.context;
        if (!admit(context)) continue;
        for (std::size_t i = 0; i < context.host.plan.modules.size(); ++i) classify(context, i);
    }
}

void HostModulesPlanner::read(CacheContext& context, HostPlanOptions options)
{
    // Pyccel's gcc runs without them (the allow-list), so a user who set one
    // to change host builds is told, not ignored.
    if (may_start_tools())
        for (const auto& name : host_compiler_refused(process_environment()))
            throw UsageError(refused_variable_message(name, "the host compiler (Pyccel's gcc)"));
    HostContext& host = context.host;
    host.setup = prepare_host_setup(config(), context.location.name, context.probe, may_start_tools());
    host.setup.toolchain.cache_root = context.store.root().string();
    if (!host.setup.problem.empty()) return;
    bool in_place = options.in_place;
    options.record = plan_.record.get();
    host.plan = plan_host_builds(host.kernels, host.setup.toolchain, options);
    if (!in_place) host.entries = read_entries(context);
}

namespace {

// Whether the entry's host library is there, or the entry never had one (a
// build without STC, an entry made before host libraries). Only a missing
// or empty library costs a manifest read: a warm build stats one more file.
bool has_its_library(const EntryStore& store, const std::string& key, const HostModule& module)
{
    fs::path library =
        store.entry_dir("host", key) / module.relative.parent_path() / host_library_file(module_stem(module));
    std::error_code error;
    if (fs::file_size(library, error) > 0 && !error) return true;
    auto manifest = store.find("host", key);
    return manifest && std::none_of(manifest->artifacts.begin(), manifest->artifacts.end(),
                                    [](const Artifact& artifact) { return artifact.target == "host-library"; });
}

}  // namespace

std::vector<HostEntryState> HostModulesPlanner::read_entries(const CacheContext& context)
{
    const HostPlan& plan = context.host.plan;
    const std::string& ext_suffix = context.host.setup.tools.ext_suffix;
    std::vector<HostEntryState> entries(plan.modules.size());
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        if (!plan.modules[i].problem.empty()) continue;
        const HostJob& job = plan.jobs[i];
        entries[i].cunumpy_name = read_cunumpy_entry(context.store.root(), job.cunumpy_name, ext_suffix);
        entries[i].has_entry =
            context.store.has_entry("host", job.key, {host_artifact_file(plan.modules[i], ext_suffix)}) &&
            has_its_library(context.store, job.key, plan.modules[i]);
    }
    return entries;
}

bool HostModulesPlanner::admit(CacheContext& context)
{
    HostContext& host = context.host;
    if (!host.setup.warning.empty()) plan_.warnings.push_back(host.setup.warning);
    if (host.setup.problem.empty()) return true;
    // A dry run that could ask the tools fails as the build would; status, which
    // asks none, lists the kernels with the reason instead.
    if (may_start_tools()) throw ToolchainError(host.setup.problem);
    for (const KernelSource* kernel : host.kernels)
        plan_.decided.push_back(unplanned_host(*kernel, host.setup.problem));
    return false;
}

JobResult HostModulesPlanner::unplanned_host(const KernelSource& kernel, const std::string& why)
{
    JobResult result;
    result.module = kernel.module;
    result.kernel = kernel.name;
    result.kind = "host";
    result.target = "host";
    result.state = JobState::would_build;
    result.reason = why;
    return result;
}

void HostModulesPlanner::classify(CacheContext& context, std::size_t index)
{
    const HostPlan& plan = context.host.plan;
    const HostModule& module = plan.modules[index];
    const HostJob& job = plan.jobs[index];
    if (!module.problem.empty()) {
        JobResult result = host_base_result(plan, index, context.store);
        result.log = module.problem;
        plan_.writes.failures.push_back({&context, "host", result.module, "host", result.key, result.log});
        plan_.decided.push_back(std::move(result));
        return;
    }
    const HostBuildTools& tools = context.host.setup.tools;
    const HostEntryState& state = context.host.entries[index];
    const CunumpyEntry& named = state.cunumpy_name;
    if (state.has_entry) {
        JobResult hit = host_hit_result(plan, index, tools, context.store);
        if (roots_.refuse_writable_entry(context, hit, {host_artifact_file(module, tools.ext_suffix)})) return;
        roots_.count_hit(context, "host", host_label(module), "host", job.key);
        CunumpyNameHolder holder = check_cunumpy_name(plan, index, context.store, named);
        if (!holder.problem.empty() && request().dry_run)
            hit.cunumpy_name_problem = name_advice(holder);
        else if (!holder.problem.empty() && CacheRoots::may_write(context))
            warn_if_taken(context, index, holder);
        if (!holder.problem.empty() && CacheRoots::may_write(context)) repoint_cunumpy_entry(context, index);
        plan_.decided.push_back(std::move(hit));
        return;
    }
    bool self_contained = module.imports.empty() && module.imported_by.empty();
    if (named.kind == CunumpyEntry::Kind::folder && self_contained) {
        ++context.hits;
        plan_.decided.push_back(cunumpy_hit(plan, index, context, named));
        return;
    }
    if (!request().dry_run && named.kind == CunumpyEntry::Kind::link)
        warn_if_taken(context, index, check_cunumpy_name(plan, index, context.store, named));
    std::string reason = explain_miss(context, index);
    if (named.kind == CunumpyEntry::Kind::folder && reason == "no entry")
        reason = "cunumpy's own build leaves imported modules out of its key";
    plan_.host_misses.push_back(HostMiss{&context, index, reason});
}

std::string HostModulesPlanner::name_advice(const CunumpyNameHolder& holder)
{
    if (holder.other_module.empty()) return holder.problem + "; `build` re-points it";
    return holder.problem + "; `build` re-points it, and cunumpy then loads this module's build for " +
           holder.other_module + ": make the two texts differ";
}

void HostModulesPlanner::warn_if_taken(const CacheContext& context, std::size_t index, const CunumpyNameHolder& holder)
{
    if (holder.other_module.empty()) return;
    const HostModule& module = context.host.plan.modules[index];
    plan_.warnings.push_back(holder.problem + "; building " + module.name +
                             " re-points it, and cunumpy then loads that build for " + holder.other_module +
                             " too: make the texts of " + module.file.string() + " and " + holder.other_module +
                             " differ (a comment naming the package is enough)");
}

void HostModulesPlanner::repoint_cunumpy_entry(CacheContext& context, std::size_t index)
{
    const HostPlan& plan = context.host.plan;
    fs::path entry = host_build_folder(context.store, plan.jobs[index].key, plan.modules[index])
                         .lexically_relative(context.store.root());
    plan_.writes.cunumpy_names.push_back({&context, plan.jobs[index].cunumpy_name, entry});
}

JobResult HostModulesPlanner::cunumpy_hit(const HostPlan& plan, std::size_t index, const CacheContext& context,
                                          const CunumpyEntry& named)
{
    JobResult result = host_base_result(plan, index, context.store);
    result.state = JobState::hit;
    result.entry = named.path;
    result.artifacts = {named.path /
                        (plan.modules[index].relative.stem().string() + context.host.setup.tools.ext_suffix)};
    result.reason = "built by cunumpy's PyccelCache";
    return result;
}

std::string HostModulesPlanner::explain_miss(const CacheContext& context, std::size_t index)
{
    const HostPlan& plan = context.host.plan;
    auto previous = context.store.latest("host", host_label(plan.modules[index]), "host");
    if (!previous) return "no entry";
    std::string change = describe_host_change(previous->inputs, plan.jobs[index].inputs);
    return change.empty() ? "no entry" : change;
}

}  // namespace ck
