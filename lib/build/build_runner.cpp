// run_build: plan (build_plan.cpp), then compile the misses in a job graph
// (a host module after the modules it imports), publishing each kernel's
// targets together once all have finished.
#include "build/build.hpp"

#include "build/build_plan.hpp"
#include "build/cupy_fill.hpp"
#include "build/cuda_build.hpp"
#include "build/host_job.hpp"
#include "build/in_place_job.hpp"
#include "cache/cache_stats.hpp"
#include "compilers/compiler_scratch.hpp"
#include "scheduler/job_graph.hpp"
#include "scheduler/job_pool.hpp"
#include "util/subprocess.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

namespace ck {

namespace {

class BuildRunner {
public:
    BuildRunner(BuildPlan plan, BuildObserver* observer) : plan_(std::move(plan)), observer_(observer) {}

    BuildReport run()
    {
        report_.kernels = plan_.kernels;
        report_.warnings = plan_.warnings;
        std::size_t misses = plan_.cuda_misses.size() + plan_.host_misses.size();
        if (observer_) observer_->planned(plan_.decided.size() + misses, misses);
        for (auto& decided : plan_.decided) {
            if (observer_) observer_->finished(decided);
            report_.jobs.push_back(std::move(decided));
        }
        // Scratch folders of interrupted or killed earlier builds, nvcc's tmpxft_* files inside.
        remove_stale_compiler_scratch(scratch_parent());
        compile_misses();
        record_counters();
        sort_jobs(report_);
        return std::move(report_);
    }

private:
    // The misses of one kernel's targets, compiled so far.
    struct KernelTargets {
        std::size_t expected = 0;
        std::vector<CompiledCudaJob> compiled;
    };

    const Config& config() const { return plan_.request.config; }

    // Hits and compiles per cache root, for `cache info`: a hit is a job
    // that found its entry, a miss one that compiled (built or failed).
    void record_counters()
    {
        std::map<CacheContext*, CacheCounters> counters;
        for (const auto& miss : plan_.cuda_misses) ++counters[miss.context].build_misses;
        for (const auto& miss : plan_.host_misses) ++counters[miss.context].build_misses;
        for (const auto& [name, context] : plan_.contexts) counters[context.get()].build_hits += context->hits;
        for (const auto& [context, counted] : counters)
            if (context->read_only.empty()) add_counters(context->store.root(), counted);
    }

    // Host misses first (they take seconds each and may head long import
    // chains), then CUDA misses; a host miss waits for the misses it imports.
    JobDependencies miss_dependencies() const
    {
        std::map<std::pair<const CacheContext*, std::size_t>, std::size_t> host_index;
        for (std::size_t i = 0; i < plan_.host_misses.size(); ++i)
            host_index[{plan_.host_misses[i].context, plan_.host_misses[i].module}] = i;
        JobDependencies dependencies(plan_.host_misses.size() + plan_.cuda_misses.size());
        for (std::size_t i = 0; i < plan_.host_misses.size(); ++i) {
            const HostMiss& miss = plan_.host_misses[i];
            for (std::size_t imported : miss.context->host.plan.modules[miss.module].imports) {
                auto it = host_index.find({miss.context, imported});
                if (it != host_index.end()) dependencies[i].push_back(it->second);
            }
        }
        return dependencies;
    }

    void compile_misses()
    {
        for (const auto& miss : plan_.cuda_misses) ++kernel_targets_[miss.job.kernel].expected;
        JobGraph(job_count(config().jobs)).run(
            miss_dependencies(),
            [this](std::size_t i) {
                std::vector<JobResult> results;
                if (i < plan_.host_misses.size()) results.push_back(run_host_miss(plan_.host_misses[i]));
                else results = run_cuda_miss(plan_.cuda_misses[i - plan_.host_misses.size()]);
                bool ok = std::none_of(results.begin(), results.end(),
                                       [](const JobResult& r) { return r.state == JobState::failed; });
                for (auto& result : results) finish(std::move(result));
                return ok;
            },
            [this](std::size_t i, std::size_t failed) { finish(skipped_host(plan_.host_misses[i], plan_.host_misses[failed])); });
    }

    // Compiles one target of a kernel; the last of its kernel's targets to
    // finish publishes them all, or none (publish_cuda_kernel). Returns the
    // results of every target then, and nothing before.
    std::vector<JobResult> run_cuda_miss(const CudaMiss& miss)
    {
        if (observer_) {
            std::lock_guard lock(mutex_);
            observer_->started(would_build(plan_, miss));
        }
        CompiledCudaJob compiled = miss.context->read_only.empty()
                                       ? compile_cuda_job(miss.job, *miss.context->compiler)
                                       : read_only_failure(miss);
        compiled.result.reason = miss.reason;
        std::vector<CompiledCudaJob> targets;
        {
            std::lock_guard lock(mutex_);
            KernelTargets& kernel = kernel_targets_[miss.job.kernel];
            kernel.compiled.push_back(std::move(compiled));
            if (kernel.compiled.size() < kernel.expected) return {};
            targets = std::move(kernel.compiled);
        }
        return publish_cuda_kernel(std::move(targets), miss.context->store);
    }

    JobResult run_host_miss(const HostMiss& miss)
    {
        if (observer_) {
            std::lock_guard lock(mutex_);
            observer_->started(would_build(plan_, miss));
        }
        const HostContext& host = miss.context->host;
        if (!miss.context->read_only.empty()) {
            JobResult result = would_build(plan_, miss);
            result.state = JobState::failed;
            result.log = "not compiled: " + miss.context->read_only + "; run build where the cache can be written";
            return result;
        }
        JobResult result = config().in_place
                               ? run_in_place_job(host.plan, miss.module, host.setup.tools, miss.context->store)
                               : run_host_job(host.plan, miss.module, host.setup.tools, miss.context->store);
        result.reason = miss.reason;
        return result;
    }

    JobResult skipped_host(const HostMiss& miss, const HostMiss& failed) const
    {
        JobResult result = would_build(plan_, miss);
        result.state = JobState::failed;
        const HostModule& module = miss.context->host.plan.modules[miss.module];
        result.log = module.file.string() + ": not built: it imports " +
                     failed.context->host.plan.modules[failed.module].name +
                     " (directly or through other modules), which failed to build";
        return result;
    }

    CompiledCudaJob read_only_failure(const CudaMiss& miss) const
    {
        CompiledCudaJob compiled{&miss.job, would_build(plan_, miss), {}, "not compiled: " + miss.context->read_only};
        compiled.result.state = JobState::failed;
        compiled.result.log = compiled.failure + "; run build where the cache can be written";
        return compiled;
    }

    void finish(JobResult result)
    {
        std::lock_guard lock(mutex_);
        if (observer_) observer_->finished(result);
        report_.jobs.push_back(std::move(result));
    }

    BuildPlan plan_;
    BuildObserver* observer_;
    BuildReport report_;
    std::map<const KernelSource*, KernelTargets> kernel_targets_;
    std::mutex mutex_;
};

// After the tool's own jobs: CuPy's compiles are NVRTC's as well, and the
// two would only compete for the same cores.
void add_cupy_jobs(const BuildRequest& request, BuildReport& report, BuildObserver* observer)
{
    if (observer && !request.dry_run) {
        JobResult phase;
        phase.module = "CuPy's kernel cache";
        phase.kind = "cupy";
        phase.target = "all";
        observer->started(phase);
    }
    CupyFill fill = fill_cupy_cache(report.kernels, request.config, request.cupy_cache_dir, request.dry_run);
    report.cupy = fill.installation;
    if (!fill.installation.unavailable.empty())
        report.warnings.push_back("CuPy's kernel cache was not filled: " + fill.installation.unavailable);
    for (auto& job : fill.jobs) {
        if (observer) observer->finished(job);
        report.jobs.push_back(std::move(job));
    }
    sort_jobs(report);
}

}  // namespace

void stop_compiler_processes() noexcept
{
    util::terminate_children();
    remove_compiler_scratch_folders();
}

BuildReport run_build(const BuildRequest& request, BuildObserver* observer)
{
    auto start = std::chrono::steady_clock::now();
    BuildPlan plan = plan_build(request);
    BuildReport report;
    if (request.dry_run) {
        report = preview_build(plan);
        if (observer) {
            observer->planned(report.jobs.size(), plan.cuda_misses.size() + plan.host_misses.size());
            for (const auto& job : report.jobs) observer->finished(job);
        }
    } else {
        report = BuildRunner(std::move(plan), observer).run();
    }
    if (request.cupy) add_cupy_jobs(request, report, observer);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace ck
