// run_build: plan (build_plan.cpp), then compile the misses in a job graph
// (a host module after the modules it imports), publishing each kernel's
// targets together once all have finished.
#include "builder/build.hpp"

#include "builder/build_plan.hpp"
#include "cupy_cache/cupy_fill.hpp"
#include "builder/cuda_build.hpp"
#include "host/host_job.hpp"
#include "host/in_place_job.hpp"
#include "cache/build_lock.hpp"
#include "cache/cache_stats.hpp"
#include "compilers/compiler_scratch.hpp"
#include "scheduler/job_graph.hpp"
#include "struct_headers/cubin_layout_check.hpp"
#include "struct_headers/cubin_layout_checker.hpp"
#include "struct_headers/struct_layouts.hpp"
#include "util/job_pool.hpp"
#include "util/elapsed.hpp"
#include "util/subprocess.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace ck {

namespace {

// Why a miss compiled nothing: another builder published its key while this
// one waited for the lock. Names that builder when the manifest says
// ("published by node-3:4242 while this one waited"); older manifests do not.
std::string published_elsewhere_reason(const EntryStore& store, const std::string& kind, const std::string& key)
{
    auto manifest = store.find(kind, key);
    std::string by = manifest && !manifest->published_by.empty() ? manifest->published_by : "another build";
    return "published by " + by + " while this one waited";
}

class BuildRunner {
public:
    BuildRunner(BuildPlan plan, BuildObserver* observer) : plan_(std::move(plan)), observer_(observer) {}

    BuildReport run()
    {
        report_.kernels = plan_.kernels;
        report_.warnings = plan_.warnings;
        std::size_t misses = plan_.cuda_misses.size() + plan_.host_misses.size();
        if (observer_) observer_->planned(plan_.decided.size() + misses, misses);
        check_hit_layouts();
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
    // The misses of one kernel's targets, compiled so far, and the build
    // locks of their keys, held from the first target's start until the
    // kernel is published.
    struct KernelTargets {
        std::vector<const CudaMiss*> misses;
        std::vector<CompiledCudaJob> compiled;
        std::vector<JobResult> found;  ///< published by another builder while this one waited
        std::once_flag locking;
        std::vector<std::unique_ptr<BuildLock>> locks;
        std::set<std::string> published_elsewhere;  ///< keys
    };

    const Config& config() const { return plan_.request.config; }

    // Every built cubin against what the runtime packs (the struct headers
    // are read once a build, at the first compile).
    void check_layouts(std::vector<CompiledCudaJob>& outputs, const KernelSource& kernel)
    {
        std::call_once(structs_read_, [&] {
            try {
                structs_ = configured_struct_layouts(config());
            } catch (const Error& error) {
                structs_error_ = error.what();
            }
        });
        if (!structs_error_.empty()) {
            for (auto& output : outputs) fail_compiled(output, structs_error_, structs_error_);
            return;
        }
        check_parameter_layouts(outputs, runtime_layout(kernel, config(), structs_));
    }

    // A hit's cubin is checked as a fresh one is: its key does not cover a
    // struct header the kernel does not include (its own copy of the struct),
    // and a header regenerated since changes what the runtime packs.
    void check_hit_layouts()
    {
        if (!plan_.record) return;
        CubinLayoutChecker checker(config(), *plan_.record);
        for (auto& job : plan_.decided) {
            if (job.state != JobState::hit || job.kind != "cuda") continue;
            auto kernel = std::find_if(plan_.kernels.begin(), plan_.kernels.end(), [&](const KernelSource& k) {
                return k.module == job.module && k.name == job.kernel;
            });
            if (kernel == plan_.kernels.end()) continue;
            std::string problem = checker.problem(*kernel, job);
            if (problem.empty()) continue;
            job.state = JobState::failed;
            job.log = job.log.empty() ? problem : job.log + "\n" + problem;
        }
        plan_.record->save();
    }

    // Hits and compiles per cache root, for `cache info`: a hit is a job
    // that found its entry, a miss one that compiled (built or failed).
    void record_counters()
    {
        std::map<CacheContext*, CacheCounters> counters;
        // A miss another builder published while this one waited compiled nothing here: a hit.
        auto count = [&](CacheContext* context, const std::string& key) {
            if (published_elsewhere_keys_.count(key))
                ++counters[context].build_hits;
            else
                ++counters[context].build_misses;
        };
        for (const auto& miss : plan_.cuda_misses) count(miss.context, miss.job.key);
        for (const auto& miss : plan_.host_misses) count(miss.context, miss.context->host.plan.jobs[miss.module].key);
        for (const auto& [name, context] : plan_.contexts) counters[context.get()].build_hits += context->hits;
        for (const auto& [context, counted] : counters)
            if (context->read_only.empty()) add_counters(context->store.root(), counted);
    }

    // Host misses first (they take seconds each and may head long import
    // chains), then CUDA groups; a host miss waits for the misses it imports.
    JobDependencies miss_dependencies() const
    {
        std::map<std::pair<const CacheContext*, std::size_t>, std::size_t> host_index;
        for (std::size_t i = 0; i < plan_.host_misses.size(); ++i)
            host_index[{plan_.host_misses[i].context, plan_.host_misses[i].module}] = i;
        JobDependencies dependencies(plan_.host_misses.size() + cuda_groups_.size());
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
        group_cuda_misses();
        JobDependencies dependencies = miss_dependencies();
        std::vector<double> seconds(dependencies.size(), 0);
        JobGraph graph(job_count(config().jobs));
        auto start = std::chrono::steady_clock::now();
        graph.run(
            dependencies,
            [this, &seconds](std::size_t i) {
                auto job_start = std::chrono::steady_clock::now();
                bool ok = run_miss(i);
                seconds[i] = util::seconds_since(job_start);
                return ok;
            },
            [this](std::size_t i, std::size_t failed) {
                finish(skipped_host(plan_.host_misses[i], plan_.host_misses[failed]));
            });
        ScheduleReport& schedule = report_.schedule;
        schedule.workers = graph.workers();
        schedule.jobs = dependencies.size();
        schedule.wall_seconds = util::seconds_since(start);
        for (double job : seconds) schedule.job_seconds += job;
        schedule.longest_path_seconds = longest_path(dependencies, seconds);
    }

    bool run_miss(std::size_t i)
    {
        std::vector<JobResult> results;
        if (i < plan_.host_misses.size())
            results.push_back(run_host_miss(plan_.host_misses[i]));
        else
            results = run_cuda_group(cuda_groups_[i - plan_.host_misses.size()]);
        bool ok = std::none_of(results.begin(), results.end(),
                               [](const JobResult& r) { return r.state == JobState::failed; });
        for (auto& result : results) finish(std::move(result));
        return ok;
    }

    // A kernel's misses, in groups its compiler compiles in one run (one
    // front end per virtual architecture, one nvcc process): one job each.
    void group_cuda_misses()
    {
        std::vector<const KernelSource*> kernels;
        for (const auto& miss : plan_.cuda_misses) {
            auto& targets = kernel_targets_[miss.job.kernel];
            if (targets.misses.empty()) kernels.push_back(miss.job.kernel);
            targets.misses.push_back(&miss);
        }
        for (const KernelSource* kernel : kernels) {
            const auto& misses = kernel_targets_.at(kernel).misses;
            std::vector<const CudaJob*> jobs;
            for (const CudaMiss* miss : misses) jobs.push_back(&miss->job);
            for (const auto& group : cuda_compile_groups(jobs, *misses.front()->context->compiler)) {
                cuda_groups_.emplace_back();
                for (std::size_t i : group) cuda_groups_.back().push_back(misses[i]);
            }
        }
    }

    // Compiles a group of a kernel's targets; the last group of the kernel
    // to finish publishes all its targets, or none (publish_cuda_kernel).
    // Returns the results of every target then, and nothing before.
    std::vector<JobResult> run_cuda_group(const std::vector<const CudaMiss*>& group)
    {
        const CudaMiss& first = *group.front();
        if (observer_) {
            std::lock_guard lock(mutex_);
            for (const CudaMiss* miss : group) observer_->started(would_build(plan_, *miss));
        }
        KernelTargets& kernel = targets_of(first);
        bool writable = first.context->read_only.empty();
        if (writable) std::call_once(kernel.locking, [&] { lock_keys(kernel); });
        std::vector<CompiledCudaJob> compiled;
        std::vector<JobResult> found;
        std::vector<const CudaJob*> to_compile;
        std::vector<std::string> reasons;
        for (const CudaMiss* miss : group) {
            if (!writable) {
                compiled.push_back(read_only_failure(*miss));
                compiled.back().result.reason = miss->reason;
            } else if (kernel.published_elsewhere.count(miss->job.key))
                found.push_back(found_result(*miss));
            else {
                to_compile.push_back(&miss->job);
                reasons.push_back(miss->reason);
            }
        }
        if (!to_compile.empty()) {
            auto outputs = compile_cuda_jobs(to_compile, *first.context->compiler);
            if (first.context->planner)
                refuse_if_inputs_changed(outputs, inputs_changed_since(*first.context->planner, *to_compile.front()));
            check_layouts(outputs, *first.job.kernel);
            for (std::size_t i = 0; i < outputs.size(); ++i) {
                outputs[i].result.reason = reasons[i];
                compiled.push_back(std::move(outputs[i]));
            }
        }
        std::vector<CompiledCudaJob> targets;
        std::vector<JobResult> results;
        std::vector<std::unique_ptr<BuildLock>> locks;
        {
            std::lock_guard lock(mutex_);
            for (auto& target : compiled) kernel.compiled.push_back(std::move(target));
            for (auto& result : found) kernel.found.push_back(std::move(result));
            if (kernel.compiled.size() + kernel.found.size() < kernel.misses.size()) return {};
            targets = std::move(kernel.compiled);
            results = std::move(kernel.found);
            locks = std::move(kernel.locks);
        }
        for (auto& result : publish_cuda_kernel(std::move(targets), first.context->store))
            results.push_back(std::move(result));
        return results;  // the locks go once the entries are published
    }

    KernelTargets& targets_of(const CudaMiss& miss)
    {
        std::lock_guard lock(mutex_);
        return kernel_targets_.at(miss.job.kernel);
    }

    // Takes the build lock of each of the kernel's missing keys, in key
    // order so that two builders missing overlapping sets cannot wait for
    // each other. A key another builder published meanwhile is not built.
    void lock_keys(KernelTargets& kernel)
    {
        std::vector<const CudaMiss*> misses = kernel.misses;
        std::sort(misses.begin(), misses.end(), [](auto* a, auto* b) { return a->job.key < b->job.key; });
        for (const CudaMiss* miss : misses) {
            const EntryStore& store = miss->context->store;
            const CudaJob& job = miss->job;
            auto published = [&] { return store.has_entry("cuda", job.key, {job.artifact_file()}); };
            auto lock = BuildLock::acquire(store.lock_file("cuda", job.key), published, lock_timing_,
                                           lock_events("kernel " + job.kernel->module + " for " + job.target));
            if (lock)
                kernel.locks.push_back(std::move(lock));
            else
                kernel.published_elsewhere.insert(job.key);
        }
    }

    LockEvents lock_events(std::string what)
    {
        LockEvents events;
        events.what = std::move(what);
        events.gone = &gone_holders_;
        // A broken lock is worth a warning in every report; a wait only to someone watching.
        events.broken = [this](const std::string& message) {
            std::lock_guard lock(mutex_);
            report_.warnings.push_back(message);
            if (observer_) observer_->lock_broken(message);
        };
        if (observer_)
            events.waiting = [this](const std::string& message) {
                std::lock_guard lock(mutex_);
                observer_->waiting(message);
            };
        return events;
    }

    JobResult found_result(const CudaMiss& miss)
    {
        JobResult result = hit_result(miss.job, miss.context->store);
        result.reason = published_elsewhere_reason(miss.context->store, "cuda", miss.job.key);
        std::lock_guard lock(mutex_);
        published_elsewhere_keys_.insert(miss.job.key);
        return result;
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
        if (config().in_place) {
            JobResult result = run_in_place_job(host.plan, miss.module, host.setup.tools, miss.context->store);
            result.reason = miss.reason;
            return result;
        }
        const EntryStore& store = miss.context->store;
        const std::string& key = host.plan.jobs[miss.module].key;
        auto published = [&] { return store.find("host", key).has_value(); };
        auto lock = BuildLock::acquire(store.lock_file("host", key), published, lock_timing_,
                                       lock_events("host module " + host.plan.modules[miss.module].name));
        if (!lock) {
            JobResult result = host_hit_result(host.plan, miss.module, host.setup.tools, store);
            result.reason = published_elsewhere_reason(store, "host", key);
            std::lock_guard guard(mutex_);
            published_elsewhere_keys_.insert(key);
            return result;
        }
        JobResult result = run_host_job(host.plan, miss.module, host.setup.tools, store);
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
    std::vector<std::vector<const CudaMiss*>> cuda_groups_;  ///< one graph job each, after the host misses
    LockTiming lock_timing_ = LockTiming::from_environment();
    GoneHolders gone_holders_;
    std::set<std::string> published_elsewhere_keys_;
    std::once_flag structs_read_;
    StructLayouts structs_;
    std::string structs_error_;  ///< misses another builder published meanwhile
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
    remove_held_build_locks();
}

BuildReport run_build(const BuildRequest& request, BuildObserver* observer)
{
    auto start = std::chrono::steady_clock::now();
    BuildPlan plan = plan_build(request);
    double plan_seconds = util::seconds_since(start);
    BuildReport report;
    if (request.dry_run) {
        report = preview_build(plan);
        if (observer) {
            observer->planned(report.jobs.size(), plan.cuda_misses.size() + plan.host_misses.size());
            for (const auto& job : report.jobs) observer->finished(job);
        }
    } else {
        apply_planned_writes(plan);
        report = BuildRunner(std::move(plan), observer).run();
    }
    report.schedule.plan_seconds = plan_seconds;
    report.schedule.workers = job_count(request.config.jobs);
    if (request.cupy) add_cupy_jobs(request, report, observer);
    report.seconds = util::seconds_since(start);
    return report;
}

}  // namespace ck
