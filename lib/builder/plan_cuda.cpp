// CudaKernelsPlanner: the CUDA kernels, their compiler set up per cache root,
// read on a second thread and added to the plan in one thread's order.
#include "builder/plan_cuda.hpp"

#include "builder/cuda_build.hpp"
#include "explain/input_change.hpp"
#include "util/subprocess.hpp"

namespace ck {

namespace fs = std::filesystem;

CacheContext& CudaKernelsPlanner::cuda_context_for(const KernelSource& kernel)
{
    CacheContext& context = roots_.context_for(kernel);
    if (!context.compiler && context.unknown.empty()) plan_with_tools(context);
    return context;
}

void CudaKernelsPlanner::plan_with_tools(CacheContext& context)
{
    std::optional<std::string> identity;
    try {
        context.compiler = make_cuda_compiler(config(), context.probe);
        identity = may_start_tools() ? context.compiler->identity() : context.compiler->remembered_identity();
    } catch (const ToolchainError& error) {
        if (may_start_tools()) throw;
        context.unknown = error.what();
    }
    if (!identity && context.unknown.empty())
        context.unknown = "no record of the " + to_string(config().compiler) + " version in " +
                          (context.location.root / ".probes").string() +
                          " (status starts no compiler): run `cunumpy-kernels build` once";
    CunumpyDirResolver recorded = cunumpy_dir_resolver(config(), context.probe, may_start_tools());
    CunumpyDirResolver resolver = recorded;
    if (!may_start_tools())
        resolver = [recorded, flag = &context.cunumpy_dir_unknown]() {
            auto dir = recorded();
            *flag = !dir;
            return dir;
        };
    // The reader leaves the flag alone: the compiler's identity, not cunumpy's folder, is what is unknown.
    if (!identity) return keep_a_reader(context, recorded);
    std::optional<std::string> host;
    try {
        host = context.compiler->host_compiler_identity(host_compiler_option(config(), context.compiler->environment()),
                                                        may_start_tools());
    } catch (const ToolchainError& error) {
        if (may_start_tools()) throw;
        context.unknown = error.what();
        return keep_a_reader(context, recorded);
    }
    if (!host) {
        context.unknown = "no record of the version of nvcc's host compiler in " +
                          (context.location.root / ".probes").string() +
                          " (status starts no compiler): run `cunumpy-kernels build` once";
        return keep_a_reader(context, recorded);
    }
    context.planner = std::make_unique<CudaPlanner>(config(), with_host_compiler(*identity, *host), resolver,
                                                    compiler_facts(*context.compiler));
    context.planner->use_record(plan_.record.get());
    warn_about_compiler_inputs(*context.planner, context.compiler->environment());
}

void CudaKernelsPlanner::keep_a_reader(CacheContext& context, const CunumpyDirResolver& resolver)
{
    if (context.compiler)
        context.reader = std::make_unique<CudaPlanner>(config(), "", resolver, compiler_facts(*context.compiler));
}

void CudaKernelsPlanner::warn_about_compiler_inputs(const CudaPlanner& planner, const CompilerEnvironment& environment)
{
    if (compiler_warned_) return;
    compiler_warned_ = true;
    for (const auto& option : planner.verbatim_options())
        plan_.warnings.push_back("compiler option " + option + " is passed verbatim to " +
                                 to_string(config().compiler) +
                                 ": the cache key holds its spelling only; a file it reads or a folder it adds "
                                 "is not in the key");
    for (const auto& name : environment.refused)
        throw UsageError(refused_variable_message(name, to_string(config().compiler)));
}

std::vector<CudaKernelsPlanner::Reading> CudaKernelsPlanner::readings()
{
    std::vector<Reading> plannings;
    for (const auto& kernel : plan_.kernels) {
        if (!kernel.cuda_file) continue;
        std::size_t warned = plan_.warnings.size();
        Reading planning{&kernel, &cuda_context_for(kernel), {}, {}, {}, {}};
        planning.warnings = roots_.take_warnings_since(warned);
        plannings.push_back(std::move(planning));
    }
    return plannings;
}

void CudaKernelsPlanner::add(std::vector<Reading>& plannings)
{
    for (auto& planning : plannings) {
        const KernelSource& kernel = *planning.kernel;
        CacheContext& context = *planning.context;
        plan_.warnings.insert(plan_.warnings.end(), planning.warnings.begin(), planning.warnings.end());
        if (planning.error) std::rethrow_exception(planning.error);
        if (planning.unreadable) {
            fail_unreadable(kernel, *planning.unreadable);
            continue;
        }
        if (!context.planner) {
            for (const auto& target : cuda_targets(config()))
                plan_.cuda_misses.push_back(CudaMiss{unplanned_job(kernel, target), &context, context.unknown});
            continue;
        }
        std::vector<CudaJob>& jobs = planning.jobs;
        if (!jobs.empty()) warn_about_includes(kernel, jobs.front());
        for (auto& job : jobs) {
            if (context.store.has_entry("cuda", job.key, {job.artifact_file()})) {
                JobResult hit = hit_result(job, context.store);
                if (roots_.refuse_writable_entry(context, hit, {job.artifact_file()})) continue;
                roots_.count_hit(context, "cuda", job.kernel->module, job.target, job.key);
                plan_.decided.push_back(std::move(hit));
                continue;
            }
            if (context.also_read && context.also_read->has_entry("cuda", job.key, {job.artifact_file()})) {
                JobResult hit = hit_result(job, *context.also_read);
                if (roots_.refuse_writable_entry(context, *context.also_read, hit, {job.artifact_file()})) continue;
                plan_.decided.push_back(std::move(hit));
                continue;
            }
            plan_.cuda_misses.push_back(CudaMiss{std::move(job), &context, ""});
            plan_.cuda_misses.back().reason = explain_miss(plan_.cuda_misses.back());
        }
    }
}

void CudaKernelsPlanner::Reading::run()
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

CudaJob CudaKernelsPlanner::unplanned_job(const KernelSource& kernel, const std::string& target)
{
    CudaJob job;
    job.kernel = &kernel;
    job.target = target;
    return job;
}

void CudaKernelsPlanner::fail_unreadable(const KernelSource& kernel, const std::string& why)
{
    for (const auto& target : cuda_targets(config())) {
        JobResult result;
        result.module = kernel.module;
        result.kernel = kernel.name;
        result.target = target;
        result.state = JobState::failed;
        result.log = why;
        plan_.decided.push_back(std::move(result));
    }
}

void CudaKernelsPlanner::warn_about_includes(const KernelSource& kernel, const CudaJob& job)
{
    for (const auto& name : job.inputs.value("unresolved_includes", nlohmann::json::array())) {
        if (cunumpy_warned_ || name.get<std::string>().rfind("cunumpy/", 0) != 0) continue;
        cunumpy_warned_ = true;
        bool no_python = util::find_in_path(config().python).empty();
        std::string remedy = no_python ? "'" + config().python +
                                             "' is no Python interpreter to ask: pass --python with one that "
                                             "has cunumpy, or --cunumpy-include-dir"
                                       : "install cunumpy for " + config().python +
                                             " (pip install cunumpy), or pass --python or --cunumpy-include-dir";
        plan_.warnings.push_back(kernel.cuda_file->string() + " includes " + name.get<std::string>() +
                                 " but cunumpy's CUDA headers were not found: " + remedy);
    }
}

std::string CudaKernelsPlanner::explain_miss(const CudaMiss& miss)
{
    auto previous = miss.context->store.latest("cuda", miss.job.kernel->module, miss.job.target);
    if (!previous) return "no entry";
    std::string change = describe_input_change(previous->inputs, miss.job.inputs);
    return change.empty() ? "no entry" : change;
}

}  // namespace ck
