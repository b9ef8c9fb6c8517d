// plan_build: walk, set up each cache root, plan every job's key, and sort
// the jobs into decided (hits, failures found while planning) and misses.
#include "builder/build_plan.hpp"

#include "builder/build_planner.hpp"

#include "host/in_place_job.hpp"
#include "package/kernel_walker.hpp"
#include "util/side_thread.hpp"

namespace ck {

namespace fs = std::filesystem;

BuildPlan BuildPlanner::plan()
{
    const Config& config = plan_.request.config;
    plan_.record = std::make_shared<SourceRecord>(source_record_file(config));
    plan_.kernels = find_kernels(
        plan_.request.paths, config, [this](const std::string& w) { plan_.warnings.push_back(w); }, plan_.record.get());
    if (plan_.kernels.empty())
        plan_.warnings.push_back("no kernels found: a kernel is a folder <name> holding <name>" + config.host_suffix +
                                 ".py (see --host-suffix)");
    const BuildRequest& request = plan_.request;
    std::vector<CudaKernelsPlanner::Reading> cuda =
        request.cuda ? cuda_.readings() : std::vector<CudaKernelsPlanner::Reading>{};
    std::vector<HostModulesPlanner::Reading> host;
    std::exception_ptr host_error;  // raised after the CUDA side's, as on one thread
    // The CUDA kernels are read on a second thread while this one reads
    // the host modules: the two share only the record, which is
    // thread-safe. What each found is then added to the plan in the
    // order of a plan made on one thread, so the output is the same.
    // In place, the modules are planned when added: one plan over the
    // whole tree, not per root.
    bool in_place = request.config.in_place;
    util::run_beside(
        [&cuda] {
            for (auto& reading : cuda) reading.run();
        },
        [&] {
            try {
                if (request.host && !in_place) host = host_.readings();
            } catch (...) {
                host_error = std::current_exception();
            }
        });
    if (request.cuda) cuda_.add(cuda);
    if (host_error) std::rethrow_exception(host_error);
    if (request.host && in_place)
        in_place_.plan();
    else if (request.host)
        host_.add(host);
    return std::move(plan_);
}

BuildPlan plan_build(const BuildRequest& request) { return BuildPlanner(request).plan(); }

void apply_planned_writes(BuildPlan& plan)
{
    PlannedWrites& writes = plan.writes;
    for (CacheContext* context : writes.roots) {
        CacheLocation made = resolve_cache_location(context->location.name, plan.request.config.cache_dir, true);
        if (made.root != context->location.root)
            throw CacheError("cache folder " + context->location.root.string() + " could not be created after all (" +
                             made.root.string() + " was used instead): run the build again");
        context->store.ensure_tagged();
        context->store.remove_stale_temporaries();
    }
    for (const auto& [name, context] : plan.contexts)
        if (context->read_only.empty()) context->probe.write_deferred();
    for (const auto& hit : writes.hits) hit.context->store.remember_hit(hit.kind, hit.module, hit.target, hit.key);
    for (const auto& failure : writes.failures)
        failure.context->store.remember_failure(failure.kind, failure.module, failure.target, failure.key, failure.log);
    for (const auto& named : writes.cunumpy_names) {
        try {
            point_cunumpy_entry(named.context->store.root(), named.name, named.entry);
        } catch (const CacheError& error) {
            plan.warnings.push_back(error.what());
        }
    }
    if (plan.record) plan.record->save();
    writes = {};
}

JobResult would_build(const BuildPlan& plan, const CudaMiss& miss)
{
    JobResult result;
    result.module = miss.job.kernel->module;
    result.kernel = miss.job.kernel->name;
    result.target = miss.job.target;
    result.key = miss.job.key;
    result.state = JobState::would_build;
    result.reason = miss.reason;
    if (miss.context->cunumpy_dir_unknown) {
        result.key.clear();
        result.reason =
            "no record of where " + plan.request.config.python +
            " finds cunumpy's CUDA headers (status starts "
            "no Python): give status the --python that `cunumpy-kernels build` got, or run build once with this "
            "one, or pass --cunumpy-include-dir";
    }
    return result;
}

JobResult would_build(const BuildPlan& plan, const HostMiss& miss)
{
    JobResult result = plan.request.config.in_place
                           ? in_place_base_result(miss.context->host.plan, miss.module)
                           : host_base_result(miss.context->host.plan, miss.module, miss.context->store);
    result.state = JobState::would_build;
    result.reason = miss.reason;
    return result;
}

void sort_jobs(BuildReport& report)
{
    std::sort(report.jobs.begin(), report.jobs.end(), [](const JobResult& a, const JobResult& b) {
        return std::tie(a.module, a.target) < std::tie(b.module, b.target);
    });
}

BuildReport preview_build(const BuildPlan& plan)
{
    BuildReport report;
    report.kernels = plan.kernels;
    report.warnings = plan.warnings;
    report.jobs = plan.decided;
    for (const auto& miss : plan.host_misses) report.jobs.push_back(would_build(plan, miss));
    for (const auto& miss : plan.cuda_misses) report.jobs.push_back(would_build(plan, miss));
    sort_jobs(report);
    return report;
}

}  // namespace ck
