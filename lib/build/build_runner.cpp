// run_build: walk, plan every job's key, report hits, compile misses in a
// job pool, publish each result as it finishes.
#include "cunumpy_kernels/build.hpp"
#include "cunumpy_kernels/error.hpp"

#include "build/cuda_job.hpp"
#include "build/cuda_planner.hpp"
#include "compilers/tool_probe.hpp"
#include "scheduler/job_pool.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

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
    std::unique_ptr<CudaPlanner> planner;  ///< null when the compiler's identity is unknown (see `unknown`)
    std::optional<EntryStore> also_read;   ///< the unwritable preferred root, still searched for hits
    std::string read_only;                 ///< why nothing can be published here, when so
    std::string unknown;                   ///< why keys cannot be computed without starting a tool
    bool cunumpy_dir_unknown = false;      ///< a planned include needed cunumpy's folder, never recorded
};

class BuildRun {
public:
    BuildRun(const BuildRequest& request, BuildObserver* observer) : request_(request), observer_(observer) {}

    BuildReport run()
    {
        auto start = std::chrono::steady_clock::now();
        report_.kernels = find_kernels(request_.paths, config(), [this](const std::string& w) { report_.warnings.push_back(w); });
        if (report_.kernels.empty())
            report_.warnings.push_back("no kernels found: a kernel is a folder <name> holding <name>" + config().host_suffix +
                                       ".py (see --host-suffix)");
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
        std::string read_only;
        CacheLocation location = writable_location(name, read_only);
        if (location.fallback)
            report_.warnings.push_back("cache " + location.preferred.string() + " is not writable; using " +
                                       location.root.string() + " (as cunumpy's PyccelCache does)");
        auto context = std::make_unique<CacheContext>(CacheContext{location, EntryStore(location.root),
                                                                   ToolProbe(location.root / ".probes"), nullptr,
                                                                   nullptr, std::nullopt, read_only, "", false});
        // Like cunumpy, builds already in the unwritable preferred root are used.
        if (location.fallback && !location.preferred.empty()) context->also_read.emplace(location.preferred);
        if (!request_.dry_run && read_only.empty()) {
            context->store.ensure_tagged();
            context->store.remove_stale_temporaries();
        }
        plan_with_tools(*context);
        return *contexts_.emplace(name, std::move(context)).first->second;
    }

    bool may_start_tools() const { return request_.start_tools || !request_.dry_run; }

    // Without tools (status), the compiler's identity and cunumpy's folder
    // come from the probe records only; what is missing makes misses unknown.
    void plan_with_tools(CacheContext& context)
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
        CunumpyDirResolver resolver = cunumpy_dir_resolver(config(), context.probe, may_start_tools());
        if (!may_start_tools())
            resolver = [resolver, flag = &context.cunumpy_dir_unknown]() {
                auto dir = resolver();
                *flag = !dir;
                return dir;
            };
        if (identity) context.planner = std::make_unique<CudaPlanner>(config(), *identity, resolver);
    }

    // A cache folder given explicitly that exists but cannot be written still
    // serves its hits: a warm shared cache on a read-only file system.
    CacheLocation writable_location(const std::string& name, std::string& read_only)
    {
        try {
            return resolve_cache_location(name, config().cache_dir, !request_.dry_run);
        } catch (const CacheError& error) {
            std::error_code ignored;
            if (!config().cache_dir || !fs::is_directory(*config().cache_dir, ignored)) throw;
            read_only = error.what();
            return resolve_cache_location(name, config().cache_dir, false);
        }
    }

    void plan()
    {
        for (const auto& kernel : report_.kernels) {
            if (!kernel.cuda_file) continue;
            CacheContext& context = context_for(kernel);
            if (!context.planner) {
                for (const auto& target : cuda_targets(config()))
                    misses_.push_back(Miss{CudaJob{&kernel, target, {}, {}, {}, {}}, &context, context.unknown});
                continue;
            }
            std::vector<CudaJob> jobs;
            try {
                jobs = context.planner->plan(kernel);
            } catch (const SourceError& error) {
                fail_unreadable(kernel, error.what());
                continue;
            }
            if (!jobs.empty()) warn_about_includes(kernel, jobs.front());
            for (auto& job : jobs) {
                if (context.store.has_entry("cuda", job.key, {job.artifact_file()})) {
                    report_.jobs.push_back(hit_result(job, context.store));
                    continue;
                }
                if (context.also_read && context.also_read->has_entry("cuda", job.key, {job.artifact_file()})) {
                    report_.jobs.push_back(hit_result(job, *context.also_read));
                    continue;
                }
                misses_.push_back(Miss{std::move(job), &context, ""});
                misses_.back().reason = explain_miss(misses_.back());
            }
        }
    }

    // Every target of a kernel whose source or a header cannot be read fails;
    // the other kernels go on.
    void fail_unreadable(const KernelSource& kernel, const std::string& why)
    {
        for (const auto& target : cuda_targets(config())) {
            JobResult result;
            result.module = kernel.module;
            result.kernel = kernel.name;
            result.target = target;
            result.state = JobState::failed;
            result.log = why;
            report_.jobs.push_back(std::move(result));
        }
    }

    void warn_about_includes(const KernelSource& kernel, const CudaJob& job)
    {
        for (const auto& directive : job.inputs.value("computed_includes", nlohmann::json::array()))
            report_.warnings.push_back("kernel " + kernel.module + ", " + directive.get<std::string>() +
                                       ": an #include through a macro is not followed, so the header it names is "
                                       "not part of the cache key; write the header's name in quotes");
        for (const auto& name : job.inputs.value("unresolved_includes", nlohmann::json::array())) {
            if (cunumpy_warned_ || name.get<std::string>().rfind("cunumpy/", 0) != 0) continue;
            cunumpy_warned_ = true;
            report_.warnings.push_back(kernel.cuda_file->string() + " includes " + name.get<std::string>() +
                                       " but cunumpy's CUDA headers were not found: install cunumpy for " +
                                       config().python + " (pip install cunumpy), or pass --python or "
                                       "--cunumpy-include-dir");
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
        if (miss.context->cunumpy_dir_unknown) {
            result.key.clear();
            result.reason = "no record of where " + config().python + " finds cunumpy's CUDA headers (status starts "
                            "no Python): run `cunumpy-kernels build` once, or pass --cunumpy-include-dir";
        }
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
            JobResult result = miss.context->read_only.empty()
                                   ? run_cuda_job(miss.job, *miss.context->compiler, miss.context->store)
                                   : read_only_failure(miss);
            result.reason = miss.reason;
            finish(std::move(result));
        });
    }

    JobResult read_only_failure(const Miss& miss) const
    {
        JobResult result = would_build(miss);
        result.state = JobState::failed;
        result.log = "not compiled: " + miss.context->read_only + "; run build where the cache can be written";
        return result;
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
    bool cunumpy_warned_ = false;
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

void stop_compiler_processes() noexcept
{
    util::terminate_children();
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
