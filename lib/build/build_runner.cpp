// run_build: walk, plan every job's key, report hits, compile misses in a
// job pool, publish each kernel's targets together once all have finished.
#include "build/build.hpp"
#include "plan/input_change.hpp"
#include "cunumpy_kernels/error.hpp"

#include "build/cuda_build.hpp"
#include "plan/cuda_planner.hpp"
#include "build/cunumpy_names.hpp"
#include "build/host_job.hpp"
#include "plan/host_planner.hpp"
#include "build/host_setup.hpp"
#include "build/in_place_job.hpp"
#include "build/in_place_record.hpp"
#include "build/pyccel_workspace.hpp"
#include "cache/cache_stats.hpp"
#include "cache/cunumpy_entry.hpp"
#include "cache/write_access.hpp"
#include "compilers/compiler_scratch.hpp"
#include "compilers/tool_probe.hpp"
#include "package/module_scan.hpp"
#include "scheduler/job_graph.hpp"
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

/// The host modules of one cache root: their setup and plan.
struct HostContext {
    HostSetup setup;
    std::vector<const KernelSource*> kernels;
    HostPlan plan;
};

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
    HostContext host;
    std::uint64_t hits = 0;                ///< jobs that found their entry here
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
        if (request_.cuda) plan();
        if (request_.host) plan_host();
        std::size_t misses = misses_.size() + host_misses_.size();
        if (observer_) observer_->planned(report_.jobs.size() + misses, misses);
        for (const auto& hit : report_.jobs)
            if (observer_) observer_->finished(hit);
        if (request_.dry_run) {
            for (const auto& miss : host_misses_) finish(would_build(miss));
            for (const auto& miss : misses_) finish(would_build(miss));
        } else {
            // Scratch folders of interrupted or killed earlier builds, nvcc's tmpxft_* files inside.
            remove_stale_compiler_scratch(scratch_parent());
            compile_misses();
        }
        if (!request_.dry_run) record_counters();
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

    // The misses of one kernel's targets, compiled so far.
    struct KernelTargets {
        std::size_t expected = 0;
        std::vector<CompiledCudaJob> compiled;
    };

    struct HostMiss {
        CacheContext* context;
        std::size_t module;  // index into context->host.plan
        std::string reason;
    };

    const Config& config() const { return request_.config; }

    // Hits and compiles per cache root, for `cache info`: a hit is a job
    // that found its entry, a miss one that compiled (built or failed).
    void record_counters()
    {
        std::map<CacheContext*, CacheCounters> counters;
        for (const auto& miss : misses_) ++counters[miss.context].build_misses;
        for (const auto& miss : host_misses_) ++counters[miss.context].build_misses;
        for (const auto& [name, context] : contexts_) counters[context.get()].build_hits += context->hits;
        for (const auto& [context, counted] : counters)
            if (context->read_only.empty()) add_counters(context->store.root(), counted);
    }

    CacheContext& context_for(const KernelSource& kernel)
    {
        return context_named(config().cache_name.value_or(kernel.top_package));
    }

    CacheContext& context_named(const std::string& name)
    {
        auto it = contexts_.find(name);
        if (it != contexts_.end()) return *it->second;
        std::string read_only;
        CacheLocation location = writable_location(name, read_only);
        if (location.fallback)
            report_.warnings.push_back("cache " + location.preferred.string() + " is not writable; using " +
                                       location.root.string() + " (as cunumpy's PyccelCache does)");
        auto context = std::make_unique<CacheContext>(CacheContext{location, EntryStore(location.root),
                                                                   ToolProbe(location.root / ".probes"), nullptr,
                                                                   nullptr, std::nullopt, read_only, "", false, {}, 0});
        // Like cunumpy, builds already in the unwritable preferred root are used.
        if (location.fallback) context->also_read.emplace(location.preferred);
        if (std::string problem = other_writable_problem(location.root); !problem.empty()) {
            if (!request_.dry_run) throw CacheError(problem);
            report_.warnings.push_back(problem);
        }
        if (!request_.dry_run && read_only.empty()) {
            context->store.ensure_tagged();
            context->store.remove_stale_temporaries();
        }
        return *contexts_.emplace(name, std::move(context)).first->second;
    }

    // The CUDA side of a cache root, set up on first use: a host-only build
    // loads no CUDA compiler and needs no toolkit.
    CacheContext& cuda_context_for(const KernelSource& kernel)
    {
        CacheContext& context = context_for(kernel);
        if (!context.compiler && context.unknown.empty()) plan_with_tools(context);
        return context;
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
        if (!identity) return;
        std::optional<std::string> host;
        try {
            host = context.compiler->host_compiler_identity(
                host_compiler_option(config(), context.compiler->environment()), may_start_tools());
        } catch (const ToolchainError& error) {
            if (may_start_tools()) throw;
            context.unknown = error.what();
            return;
        }
        if (!host) {
            context.unknown = "no record of the version of nvcc's host compiler in " +
                              (context.location.root / ".probes").string() +
                              " (status starts no compiler): run `cunumpy-kernels build` once";
            return;
        }
        context.planner = std::make_unique<CudaPlanner>(config(), with_host_compiler(*identity, *host), resolver,
                                                        compiler_facts(*context.compiler));
        warn_about_compiler_inputs(*context.planner, context.compiler->environment());
    }

    // Once per build: what the key takes on trust or what the build ignores.
    void warn_about_compiler_inputs(const CudaPlanner& planner, const CompilerEnvironment& environment)
    {
        if (compiler_warned_) return;
        compiler_warned_ = true;
        for (const auto& option : planner.unknown_options())
            report_.warnings.push_back("compiler option " + option + " is not one cunumpy-kernels knows: it is passed to " +
                                       to_string(config().compiler) + " and is part of the cache key; if it adds an "
                                       "include folder or changes the target, its effect escapes the key");
        for (const auto& name : environment.ignored)
            report_.warnings.push_back(name + " is set, but " + to_string(config().compiler) +
                                       " builds run without it so that the cache key holds every input: pass include "
                                       "folders as -I DIR and flags as --compiler-option");
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
            CacheContext& context = cuda_context_for(kernel);
            if (!context.planner) {
                for (const auto& target : cuda_targets(config()))
                    misses_.push_back(Miss{unplanned_job(kernel, target), &context, context.unknown});
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
                    if (refuse_writable_entry(context, hit_result(job, context.store), {job.artifact_file()})) continue;
                    if (may_write(context)) context.store.remember_hit("cuda", job.kernel->module, job.target, job.key);
                    ++context.hits;
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

    // A hit whose entry other users can write is reported failed, never used.
    bool refuse_writable_entry(const CacheContext& context, JobResult hit, const std::vector<std::string>& files)
    {
        std::vector<fs::path> paths(files.begin(), files.end());
        std::string problem = other_writable_problem(context.store.root(), hit.entry, paths);
        if (problem.empty()) return false;
        hit.state = JobState::failed;
        hit.log = problem;
        report_.jobs.push_back(std::move(hit));
        return true;
    }

    // Whether this build may write to the cache: not a dry run, not a read-only root.
    bool may_write(const CacheContext& context) const { return !request_.dry_run && context.read_only.empty(); }

    static CudaJob unplanned_job(const KernelSource& kernel, const std::string& target)
    {
        CudaJob job;
        job.kernel = &kernel;
        job.target = target;
        return job;
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

    void plan_host()
    {
        if (config().in_place) return plan_in_place();
        std::vector<CacheContext*> order;
        for (const auto& kernel : report_.kernels) {
            bool pyccel = std::any_of(kernel.host.begin(), kernel.host.end(), [](auto& h) { return h.kind == "pyccel"; });
            if (!pyccel) continue;
            CacheContext& context = context_for(kernel);
            if (context.host.kernels.empty()) order.push_back(&context);
            context.host.kernels.push_back(&kernel);
        }
        for (CacheContext* context : order) plan_host(*context);
    }

    // In place, every module lives in the user's tree: one plan for all of
    // them; the first cache root serves only as scratch space and remembers
    // failures for status.
    void plan_in_place()
    {
        CacheContext* context = nullptr;
        std::vector<const KernelSource*> kernels;
        for (const auto& kernel : report_.kernels) {
            bool pyccel = std::any_of(kernel.host.begin(), kernel.host.end(), [](auto& h) { return h.kind == "pyccel"; });
            if (!pyccel) continue;
            kernels.push_back(&kernel);
            if (!context) context = &context_for(kernel);
        }
        std::vector<PythonModuleFile> extra = in_place_extra_modules();
        if (kernels.empty() && extra.empty()) return;
        if (!context) context = &context_named(config().cache_name.value_or(top_package_of(extra.front())));
        context->host.kernels = std::move(kernels);
        plan_host(*context, HostPlanOptions{std::move(extra), true});
    }

    std::vector<PythonModuleFile> in_place_extra_modules() const
    {
        std::vector<fs::path> trees = request_.paths;
        if (trees.empty()) trees.push_back(fs::current_path());
        std::vector<PythonModuleFile> modules = find_suffix_modules(trees, config().host_suffix);
        for (const auto& file : config().in_place_modules) modules.push_back(python_module_file(file));
        return modules;
    }

    static std::string top_package_of(const PythonModuleFile& module)
    {
        fs::path relative = module.file.lexically_relative(module.source_root);
        return relative.has_parent_path() ? relative.begin()->string() : relative.stem().string();
    }

    void plan_host(CacheContext& context, HostPlanOptions options = {})
    {
        HostContext& host = context.host;
        host.setup = prepare_host_setup(config(), context.location.name, context.probe, may_start_tools());
        host.setup.toolchain.cache_root = context.store.root().string();
        if (!host.setup.warning.empty()) report_.warnings.push_back(host.setup.warning);
        if (!host.setup.problem.empty()) {
            // A dry run that could ask the tools fails as the build would; status, which
            // asks none, lists the kernels with the reason instead.
            if (may_start_tools()) throw ToolchainError(host.setup.problem);
            for (const KernelSource* kernel : host.kernels) report_.jobs.push_back(unplanned_host(*kernel, host.setup.problem));
            return;
        }
        bool in_place = options.in_place;
        host.plan = plan_host_builds(host.kernels, host.setup.toolchain, options);
        if (in_place) return classify_in_place(context);
        for (std::size_t i = 0; i < host.plan.modules.size(); ++i) classify_host(context, i);
    }

    // An in-place module: current (our record names its key), foreign and
    // kept (another tool built it, newer than its sources), or a miss.
    struct InPlaceVerdict {
        JobResult hit;       // state hit, when not a miss
        bool miss = false;
        std::string reason;  // of a miss
    };

    void classify_in_place(CacheContext& context)
    {
        const HostPlan& plan = context.host.plan;
        std::vector<InPlaceVerdict> verdicts;
        for (std::size_t i = 0; i < plan.modules.size(); ++i) verdicts.push_back(in_place_verdict(context, i));
        // A build links the objects of the modules it imports: it never links another tool's.
        for (std::size_t i = 0; i < plan.modules.size(); ++i) {
            if (!verdicts[i].miss) continue;
            for (std::size_t imported : plan.jobs[i].closure) {
                if (verdicts[imported].miss || verdicts[imported].hit.foreign.empty()) continue;
                verdicts[imported] = {{}, true, "built by another tool, and " + plan.modules[i].name +
                                                    ", which imports it, is rebuilt"};
            }
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < plan.modules.size(); ++i) {
            kept += verdicts[i].miss || verdicts[i].hit.foreign.empty() ? 0 : 1;
            if (verdicts[i].miss) {
                host_misses_.push_back(HostMiss{&context, i, verdicts[i].reason});
                continue;
            }
            if (verdicts[i].hit.state == JobState::hit) ++context.hits;
            report_.jobs.push_back(std::move(verdicts[i].hit));
        }
        if (kept > 0)
            report_.warnings.push_back(std::to_string(kept) + " in-place build" + (kept == 1 ? "" : "s") +
                                       " of another tool kept (newer than their sources, inputs unknown): "
                                       "`status --in-place` lists them, `build --in-place --replace-foreign` "
                                       "rebuilds them");
    }

    // The whole record is read only for a stale module: hits need its first line only.
    static std::string explain_in_place_change(const HostModule& module, const HostJob& job)
    {
        auto record = read_in_place_record(in_place_record_path(module.file.parent_path(), module_stem(module)));
        return record ? describe_host_change(record->inputs, job.inputs) : "";
    }

    InPlaceVerdict in_place_verdict(CacheContext& context, std::size_t index)
    {
        const HostPlan& plan = context.host.plan;
        const HostModule& module = plan.modules[index];
        const HostJob& job = plan.jobs[index];
        InPlaceVerdict verdict;
        verdict.hit = in_place_base_result(plan, index);
        if (!module.problem.empty()) {
            verdict.hit.log = module.problem;
            if (!request_.dry_run)
                context.store.remember_failure("in-place", verdict.hit.module, "host", job.key, module.problem);
            return verdict;
        }
        std::vector<fs::path> sources = {module.file};
        for (std::size_t imported : job.closure) sources.push_back(plan.modules[imported].file);
        const std::string& ext_suffix = context.host.setup.tools.ext_suffix;
        InPlaceState state = read_in_place_state(module.file.parent_path(), module_stem(module), ext_suffix, job.key, sources);
        verdict.hit.state = JobState::hit;
        verdict.hit.artifacts = {module.file.parent_path() / (module_stem(module) + ext_suffix)};
        using Kind = InPlaceState::Kind;
        if (state.kind == Kind::current) return verdict;
        if (state.kind == Kind::foreign && !state.older_than_sources && !request_.replace_foreign) {
            verdict.hit.foreign = "built by another tool (no record of ours beside it), newer than its sources; kept "
                                  "(`build --in-place --replace-foreign` rebuilds it)";
            return verdict;
        }
        verdict.miss = true;
        if (state.kind == Kind::missing) verdict.reason = "no entry";
        else if (state.kind == Kind::incomplete) verdict.reason = state.missing_file + " of its build is missing";
        else if (state.kind == Kind::foreign)
            verdict.reason = state.older_than_sources
                                 ? "built by another tool (no record of ours beside it), older than its sources"
                                 : "built by another tool (no record of ours beside it; --replace-foreign)";
        else if (state.record->key.empty()) verdict.reason = "an earlier in-place build was interrupted";
        else verdict.reason = explain_in_place_change(module, job);
        if (verdict.reason.empty()) verdict.reason = "built with another key";
        return verdict;
    }

    static JobResult unplanned_host(const KernelSource& kernel, const std::string& why)
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

    // A hit (our entry, or cunumpy's own build where its key covers every
    // input), a module that cannot be built, or a miss.
    void classify_host(CacheContext& context, std::size_t index)
    {
        const HostPlan& plan = context.host.plan;
        const HostModule& module = plan.modules[index];
        const HostJob& job = plan.jobs[index];
        if (!module.problem.empty()) {
            JobResult result = host_base_result(plan, index, context.store);
            result.log = module.problem;
            if (!request_.dry_run)
                context.store.remember_failure("host", result.module, "host", result.key, result.log);
            report_.jobs.push_back(std::move(result));
            return;
        }
        const HostBuildTools& tools = context.host.setup.tools;
        CunumpyEntry named = read_cunumpy_entry(context.store.root(), job.cunumpy_name, tools.ext_suffix);
        if (context.store.has_entry("host", job.key, {host_artifact_file(module, tools.ext_suffix)})) {
            if (refuse_writable_entry(context, host_hit_result(plan, index, tools, context.store),
                                      {host_artifact_file(module, tools.ext_suffix)}))
                return;
            if (may_write(context)) context.store.remember_hit("host", host_label(module), "host", job.key);
            ++context.hits;
            JobResult hit = host_hit_result(plan, index, tools, context.store);
            CunumpyNameHolder holder = check_cunumpy_name(plan, index, context.store, named);
            if (!holder.problem.empty() && request_.dry_run) hit.cunumpy_name_problem = name_advice(holder);
            if (!holder.problem.empty() && !request_.dry_run && context.read_only.empty())
                repoint_cunumpy_entry(context, index, holder);
            report_.jobs.push_back(std::move(hit));
            return;
        }
        bool self_contained = module.imports.empty() && module.imported_by.empty();
        if (named.kind == CunumpyEntry::Kind::folder && self_contained) {
            ++context.hits;
            report_.jobs.push_back(cunumpy_hit(plan, index, context, named));
            return;
        }
        if (!request_.dry_run && named.kind == CunumpyEntry::Kind::link)
            warn_if_taken(context, index, check_cunumpy_name(plan, index, context.store, named));
        std::string reason = explain_host_miss(context, index);
        if (named.kind == CunumpyEntry::Kind::folder && reason == "no entry")
            reason = "cunumpy's own build leaves imported modules out of its key";
        host_misses_.push_back(HostMiss{&context, index, reason});
    }

    // For status: what is wrong with cunumpy's name and what fixes it.
    static std::string name_advice(const CunumpyNameHolder& holder)
    {
        if (holder.other_module.empty()) return holder.problem + "; `build` re-points it";
        return holder.problem + "; `build` re-points it, and cunumpy then loads this module's build for " +
               holder.other_module + ": make the two texts differ";
    }

    // A build of another package re-pointed the name: re-pointing it back
    // hands the other module this one's build, which must not pass silently.
    void warn_if_taken(const CacheContext& context, std::size_t index, const CunumpyNameHolder& holder)
    {
        if (holder.other_module.empty()) return;
        const HostModule& module = context.host.plan.modules[index];
        report_.warnings.push_back(holder.problem + "; building " + module.name +
                                   " re-points it, and cunumpy then loads that build for " + holder.other_module +
                                   " too: make the texts of " + module.file.string() + " and " +
                                   holder.other_module + " differ (a comment naming the package is enough)");
    }

    // Our entry exists: make cunumpy's name point at it.
    void repoint_cunumpy_entry(CacheContext& context, std::size_t index, const CunumpyNameHolder& holder)
    {
        const HostPlan& plan = context.host.plan;
        warn_if_taken(context, index, holder);
        fs::path target =
            host_build_folder(context.store, plan.jobs[index].key, plan.modules[index]).lexically_relative(
                context.store.root());
        try {
            point_cunumpy_entry(context.store.root(), plan.jobs[index].cunumpy_name, target);
        } catch (const CacheError& error) {
            report_.warnings.push_back(error.what());
        }
    }

    static JobResult cunumpy_hit(const HostPlan& plan, std::size_t index, const CacheContext& context,
                                 const CunumpyEntry& named)
    {
        JobResult result = host_base_result(plan, index, context.store);
        result.state = JobState::hit;
        result.entry = named.path;
        result.artifacts = {named.path / (plan.modules[index].relative.stem().string() +
                                          context.host.setup.tools.ext_suffix)};
        result.reason = "built by cunumpy's PyccelCache";
        return result;
    }

    static std::string explain_host_miss(const CacheContext& context, std::size_t index)
    {
        const HostPlan& plan = context.host.plan;
        auto previous = context.store.latest("host", host_label(plan.modules[index]), "host");
        if (!previous) return "no entry";
        std::string change = describe_host_change(previous->inputs, plan.jobs[index].inputs);
        return change.empty() ? "no entry" : change;
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

    JobResult would_build(const HostMiss& miss) const
    {
        JobResult result = config().in_place ? in_place_base_result(miss.context->host.plan, miss.module)
                                             : host_base_result(miss.context->host.plan, miss.module, miss.context->store);
        result.state = JobState::would_build;
        result.reason = miss.reason;
        return result;
    }

    // Host misses first (they take seconds each and may head long import
    // chains), then CUDA misses; a host miss waits for the misses it imports.
    JobDependencies miss_dependencies() const
    {
        std::map<std::pair<const CacheContext*, std::size_t>, std::size_t> host_index;
        for (std::size_t i = 0; i < host_misses_.size(); ++i)
            host_index[{host_misses_[i].context, host_misses_[i].module}] = i;
        JobDependencies dependencies(host_misses_.size() + misses_.size());
        for (std::size_t i = 0; i < host_misses_.size(); ++i) {
            const HostMiss& miss = host_misses_[i];
            for (std::size_t imported : miss.context->host.plan.modules[miss.module].imports) {
                auto it = host_index.find({miss.context, imported});
                if (it != host_index.end()) dependencies[i].push_back(it->second);
            }
        }
        return dependencies;
    }

    void compile_misses()
    {
        for (const auto& miss : misses_) ++kernel_targets_[miss.job.kernel].expected;
        int jobs = config().jobs.value_or(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
        JobGraph(jobs).run(
            miss_dependencies(),
            [this](std::size_t i) {
                std::vector<JobResult> results;
                if (i < host_misses_.size()) results.push_back(run_host_miss(host_misses_[i]));
                else results = run_cuda_miss(misses_[i - host_misses_.size()]);
                bool ok = std::none_of(results.begin(), results.end(),
                                       [](const JobResult& r) { return r.state == JobState::failed; });
                for (auto& result : results) finish(std::move(result));
                return ok;
            },
            [this](std::size_t i, std::size_t failed) { finish(skipped_host(host_misses_[i], host_misses_[failed])); });
    }

    // Compiles one target of a kernel; the last of its kernel's targets to
    // finish publishes them all, or none (publish_cuda_kernel). Returns the
    // results of every target then, and nothing before.
    std::vector<JobResult> run_cuda_miss(const Miss& miss)
    {
        if (observer_) {
            std::lock_guard lock(mutex_);
            observer_->started(would_build(miss));
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
            observer_->started(would_build(miss));
        }
        const HostContext& host = miss.context->host;
        if (!miss.context->read_only.empty()) {
            JobResult result = would_build(miss);
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
        JobResult result = would_build(miss);
        result.state = JobState::failed;
        const HostModule& module = miss.context->host.plan.modules[miss.module];
        result.log = module.file.string() + ": not built: it imports " +
                     failed.context->host.plan.modules[failed.module].name +
                     " (directly or through other modules), which failed to build";
        return result;
    }

    CompiledCudaJob read_only_failure(const Miss& miss) const
    {
        CompiledCudaJob compiled{&miss.job, would_build(miss), {}, "not compiled: " + miss.context->read_only};
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

    const BuildRequest& request_;
    BuildObserver* observer_;
    BuildReport report_;
    std::map<std::string, std::unique_ptr<CacheContext>> contexts_;
    std::vector<Miss> misses_;
    std::vector<HostMiss> host_misses_;
    std::map<const KernelSource*, KernelTargets> kernel_targets_;
    bool cunumpy_warned_ = false;
    bool compiler_warned_ = false;
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
    remove_compiler_scratch_folders();
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
        json entry = {{"module", job.module}, {"kernel", job.kernel}, {"kind", job.kind}, {"target", job.target}, {"key", job.key},
                      {"state", to_string(job.state)}, {"entry", job.entry.string()}, {"artifacts", artifacts},
                      {"seconds", job.seconds}, {"reason", job.reason}, {"log", job.log}};
        if (job.target == "host") {
            entry["host_module"] = job.host_module;
            entry["cunumpy_entry"] = job.cunumpy_entry.string();
            if (!job.cunumpy_name_problem.empty()) entry["cunumpy_name_problem"] = job.cunumpy_name_problem;
            if (!job.foreign.empty()) entry["foreign"] = job.foreign;
        }
        jobs.push_back(std::move(entry));
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
