// run_build: walk, plan every job's key, report hits, compile misses in a
// job pool, publish each result as it finishes.
#include "cunumpy_kernels/build.hpp"
#include "cunumpy_kernels/error.hpp"

#include "build/cuda_job.hpp"
#include "build/cuda_planner.hpp"
#include "compilers/tool_probe.hpp"
#include "scheduler/job_pool.hpp"
#include "util/file_util.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace ck {

namespace fs = std::filesystem;

namespace {

/// One cache root with what builds into it.
struct CacheContext {
    CacheLocation location;
    EntryStore store;
    ToolProbe probe;
    std::unique_ptr<CudaCompiler> compiler;
    std::unique_ptr<CudaPlanner> planner;
};

class BuildRun {
public:
    BuildRun(const BuildRequest& request, BuildObserver* observer) : request_(request), observer_(observer) {}

    BuildReport run()
    {
        auto start = std::chrono::steady_clock::now();
        report_.kernels = find_kernels(request_.paths, config(), [this](const std::string& w) { report_.warnings.push_back(w); });
        plan();
        if (observer_) observer_->planned(report_.jobs.size() + misses_.size(), misses_.size());
        for (const auto& hit : report_.jobs)
            if (observer_) observer_->finished(hit);
        if (request_.dry_run) {
            for (const auto& miss : misses_) finish(would_build(miss));
        } else {
            compile_misses();
        }
        std::sort(report_.jobs.begin(), report_.jobs.end(), [](const JobResult& a, const JobResult& b) {
            return std::tie(a.module, a.target) < std::tie(b.module, b.target);
        });
        report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return std::move(report_);
    }

private:
    struct Miss {
        CudaJob job;
        CacheContext* context;
        std::string reason;
    };

    const Config& config() const { return request_.config; }

    CacheContext& context_for(const KernelSource& kernel)
    {
        std::string name = config().cache_name.value_or(kernel.top_package);
        auto it = contexts_.find(name);
        if (it != contexts_.end()) return *it->second;
        CacheLocation location = resolve_cache_location(name, config().cache_dir, !request_.dry_run);
        if (location.fallback)
            report_.warnings.push_back("cache " + location.preferred.string() + " is not writable; using " +
                                       location.root.string() + " (as cunumpy's PyccelCache does)");
        auto context = std::make_unique<CacheContext>(
            CacheContext{location, EntryStore(location.root), ToolProbe(location.root / ".probes"), nullptr, nullptr});
        if (!request_.dry_run) {
            context->store.ensure_tagged();
            context->store.remove_stale_temporaries();
        }
        context->compiler = make_cuda_compiler(config(), context->probe);
        context->planner = std::make_unique<CudaPlanner>(config(), context->compiler->identity(),
                                                         cunumpy_dir_resolver(config(), context->probe, true));
        return *contexts_.emplace(name, std::move(context)).first->second;
    }

    void plan()
    {
        for (const auto& kernel : report_.kernels) {
            if (!kernel.cuda_file) continue;
            CacheContext& context = context_for(kernel);
            for (auto& job : context.planner->plan(kernel)) {
                if (auto manifest = context.store.find("cuda", job.key)) {
                    report_.jobs.push_back(hit_result(job, context.store, *manifest));
                    continue;
                }
                misses_.push_back(Miss{std::move(job), &context, ""});
                misses_.back().reason = explain_miss(misses_.back());
            }
        }
    }

    static std::string explain_miss(const Miss& miss)
    {
        auto previous = miss.context->store.latest("cuda", miss.job.kernel->module, miss.job.target);
        if (!previous) return "no entry";
        std::string change = describe_input_change(previous->inputs, miss.job.inputs);
        return change.empty() ? "no entry" : change;
    }

    JobResult would_build(const Miss& miss) const
    {
        JobResult result;
        result.module = miss.job.kernel->module;
        result.kernel = miss.job.kernel->name;
        result.target = miss.job.target;
        result.key = miss.job.key;
        result.state = JobState::would_build;
        result.reason = miss.reason;
        return result;
    }

    void compile_misses()
    {
        int jobs = config().jobs.value_or(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
        JobPool(jobs).run(misses_.size(), [this](std::size_t i) {
            const Miss& miss = misses_[i];
            if (observer_) {
                std::lock_guard lock(mutex_);
                observer_->started(would_build(miss));
            }
            JobResult result = run_cuda_job(miss.job, *miss.context->compiler, miss.context->store);
            result.reason = miss.reason;
            finish(std::move(result));
        });
    }

    void finish(JobResult result)
    {
        std::lock_guard lock(mutex_);
        if (observer_) observer_->finished(result);
        report_.jobs.push_back(std::move(result));
    }

    const BuildRequest& request_;
    BuildObserver* observer_;
    BuildReport report_;
    std::map<std::string, std::unique_ptr<CacheContext>> contexts_;
    std::vector<Miss> misses_;
    std::mutex mutex_;
};

}  // namespace

const char* to_string(JobState state)
{
    switch (state) {
    case JobState::hit: return "hit";
    case JobState::built: return "built";
    case JobState::failed: return "failed";
    case JobState::would_build: return "would-build";
    }
    return "?";
}

bool BuildReport::ok() const
{
    return count(JobState::failed) == 0;
}

std::size_t BuildReport::count(JobState state) const
{
    return static_cast<std::size_t>(
        std::count_if(jobs.begin(), jobs.end(), [state](const JobResult& job) { return job.state == state; }));
}

BuildReport run_build(const BuildRequest& request, BuildObserver* observer)
{
    return BuildRun(request, observer).run();
}

nlohmann::json to_json(const BuildReport& report)
{
    using nlohmann::json;
    json kernels = json::array();
    for (const auto& kernel : report.kernels) {
        json host = json::array();
        for (const auto& h : kernel.host) host.push_back({{"kind", h.kind}, {"file", h.file.string()}});
        kernels.push_back({{"module", kernel.module},
                           {"name", kernel.name},
                           {"folder", kernel.folder.string()},
                           {"host", host},
                           {"cuda", kernel.cuda_file ? json(kernel.cuda_file->string()) : json(nullptr)}});
    }
    json jobs = json::array();
    for (const auto& job : report.jobs) {
        json artifacts = json::array();
        for (const auto& a : job.artifacts) artifacts.push_back(a.string());
        jobs.push_back({{"module", job.module}, {"kernel", job.kernel}, {"target", job.target}, {"key", job.key},
                        {"state", to_string(job.state)}, {"entry", job.entry.string()}, {"artifacts", artifacts},
                        {"seconds", job.seconds}, {"reason", job.reason}, {"log", job.log}});
    }
    return {{"ok", report.ok()},
            {"seconds", report.seconds},
            {"summary",
             {{"kernels", report.kernels.size()},
              {"hit", report.count(JobState::hit)},
              {"built", report.count(JobState::built)},
              {"failed", report.count(JobState::failed)},
              {"would_build", report.count(JobState::would_build)}}},
            {"warnings", report.warnings},
            {"kernels", kernels},
            {"jobs", jobs}};
}

}  // namespace ck
