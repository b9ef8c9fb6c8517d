// plan_build: walk, set up each cache root, plan every job's key, and sort
// the jobs into decided (hits, failures found while planning) and misses.
#include "builder/build_plan.hpp"

#include "builder/cuda_build.hpp"
#include "host/cunumpy_names.hpp"
#include "host/host_job.hpp"
#include "host/in_place_job.hpp"
#include "host/in_place_record.hpp"
#include "host/pyccel_workspace.hpp"
#include "host/cunumpy_entry.hpp"
#include "cache/write_access.hpp"
#include "cunumpy_kernels/error.hpp"
#include "package/kernel_walker.hpp"
#include "host/module_scan.hpp"
#include "explain/input_change.hpp"
#include "util/side_thread.hpp"
#include "util/subprocess.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <exception>
#include <tuple>

namespace ck {

namespace fs = std::filesystem;

namespace {

class BuildPlanner {
public:
    explicit BuildPlanner(const BuildRequest& request) { plan_.request = request; }

    BuildPlan plan()
    {
        plan_.record = std::make_shared<SourceRecord>(source_record_file(config()));
        plan_.kernels = find_kernels(request().paths, config(), [this](const std::string& w) { plan_.warnings.push_back(w); },
                                     plan_.record.get());
        if (plan_.kernels.empty())
            plan_.warnings.push_back("no kernels found: a kernel is a folder <name> holding <name>" + config().host_suffix +
                                     ".py (see --host-suffix)");
        std::vector<CudaPlanning> cuda = request().cuda ? cuda_plannings() : std::vector<CudaPlanning>{};
        std::vector<HostPlanning> host;
        std::exception_ptr host_error;  // raised after the CUDA side's, as on one thread
        // The CUDA kernels are read on a second thread while this one reads
        // the host modules: the two share only the record, which is
        // thread-safe. What each found is then added to the plan in the
        // order of a plan made on one thread, so the output is the same.
        util::run_beside(
            [&cuda] {
                for (auto& planning : cuda) planning.run();
            },
            [&] {
                try {
                    if (request().host) host = host_plannings();
                } catch (...) {
                    host_error = std::current_exception();
                }
            });
        if (request().cuda) add_cuda(cuda);
        if (host_error) std::rethrow_exception(host_error);
        if (request().host) add_host(host);
        return std::move(plan_);
    }

private:
    const BuildRequest& request() const { return plan_.request; }
    const Config& config() const { return plan_.request.config; }

    CacheContext& context_for(const KernelSource& kernel)
    {
        return context_named(cache_name_of(config(), kernel.top_package));
    }

    CacheContext& context_named(const std::string& name)
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
        auto context = std::make_unique<CacheContext>(CacheContext{location, EntryStore(location.root),
                                                                   ToolProbe(location.root / ".probes", probes_also), nullptr,
                                                                   nullptr, nullptr, std::nullopt, read_only, "", false, {}, 0, {}});
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

    // The CUDA side of a cache root, set up on first use: a host-only build
    // loads no CUDA compiler and needs no toolkit.
    CacheContext& cuda_context_for(const KernelSource& kernel)
    {
        CacheContext& context = context_for(kernel);
        if (!context.compiler && context.unknown.empty()) plan_with_tools(context);
        return context;
    }

    bool may_start_tools() const { return request().start_tools || !request().dry_run; }

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
            host = context.compiler->host_compiler_identity(
                host_compiler_option(config(), context.compiler->environment()), may_start_tools());
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

    // Keys need the compiler's identity; reading the sources does not, and a
    // header not found is a failure whatever the key would be.
    void keep_a_reader(CacheContext& context, const CunumpyDirResolver& resolver)
    {
        if (context.compiler)
            context.reader = std::make_unique<CudaPlanner>(config(), "", resolver, compiler_facts(*context.compiler));
    }

    // Once per build: what the key takes on trust or what the build ignores.
    void warn_about_compiler_inputs(const CudaPlanner& planner, const CompilerEnvironment& environment)
    {
        if (compiler_warned_) return;
        compiler_warned_ = true;
        for (const auto& option : planner.verbatim_options())
            plan_.warnings.push_back("compiler option " + option + " is passed verbatim to " + to_string(config().compiler) +
                                     ": the cache key holds its spelling only; a file it reads or a folder it adds "
                                     "is not in the key");
        for (const auto& name : environment.refused)
            throw UsageError(name + " is set: " + to_string(config().compiler) +
                             " would read it behind the cache key's back, so builds refuse it; pass its include "
                             "folders or flags in the config key `options` ([tool.cunumpy-kernels] in pyproject.toml) "
                             "or as --compiler-option (-isystem DIR, -I DIR, -Xptxas ...), and unset " + name);
    }

    // A cache folder given explicitly that exists but cannot be written still
    // serves its hits: a warm shared cache on a read-only file system.
    // Planning looks where the build will write, creating nothing.
    CacheLocation writable_location(const std::string& name, std::string& read_only)
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

    // One kernel's CUDA jobs, read apart from the plan (see plan()).
    struct CudaPlanning {
        const KernelSource* kernel = nullptr;
        CacheContext* context = nullptr;
        std::vector<std::string> warnings;      ///< what setting its root up warned, added in the plan's order
        std::vector<CudaJob> jobs;
        std::optional<std::string> unreadable;  ///< the source or a header cannot be read
        std::exception_ptr error;               ///< anything else planning threw, rethrown where it would have been

        void run()
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
    };

    // Each CUDA kernel with its cache root, the root's compiler set up: what
    // may start a tool or warn happens here, on this thread.
    std::vector<CudaPlanning> cuda_plannings()
    {
        std::vector<CudaPlanning> plannings;
        for (const auto& kernel : plan_.kernels) {
            if (!kernel.cuda_file) continue;
            std::size_t warned = plan_.warnings.size();
            CudaPlanning planning{&kernel, &cuda_context_for(kernel), {}, {}, {}, {}};
            planning.warnings = take_warnings_since(warned);
            plannings.push_back(std::move(planning));
        }
        return plannings;
    }

    // The warnings added since `count`, taken out to be added again later in
    // the order a plan made on one thread adds them.
    std::vector<std::string> take_warnings_since(std::size_t count)
    {
        auto first = plan_.warnings.begin() + static_cast<std::ptrdiff_t>(count);
        std::vector<std::string> taken(std::make_move_iterator(first), std::make_move_iterator(plan_.warnings.end()));
        plan_.warnings.erase(first, plan_.warnings.end());
        return taken;
    }

    void add_cuda(std::vector<CudaPlanning>& plannings)
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
                    if (refuse_writable_entry(context, hit, {job.artifact_file()})) continue;
                    count_hit(context, "cuda", job.kernel->module, job.target, job.key);
                    plan_.decided.push_back(std::move(hit));
                    continue;
                }
                if (context.also_read && context.also_read->has_entry("cuda", job.key, {job.artifact_file()})) {
                    JobResult hit = hit_result(job, *context.also_read);
                    if (refuse_writable_entry(context, *context.also_read, hit, {job.artifact_file()})) continue;
                    plan_.decided.push_back(std::move(hit));
                    continue;
                }
                plan_.cuda_misses.push_back(CudaMiss{std::move(job), &context, ""});
                plan_.cuda_misses.back().reason = explain_miss(plan_.cuda_misses.back());
            }
        }
    }

    // A hit whose entry other users can write is reported failed, never used.
    bool refuse_writable_entry(CacheContext& context, const JobResult& hit, const std::vector<std::string>& files)
    {
        return refuse_writable_entry(context, context.store, hit, files);
    }

    // `store`: the context's own, or the unwritable preferred root it also reads.
    bool refuse_writable_entry(CacheContext& context, const EntryStore& store, const JobResult& hit,
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

    // Whether a build may write to the root: whether planning queues writes for it.
    static bool may_write(const CacheContext& context) { return context.read_only.empty(); }

    void count_hit(CacheContext& context, const std::string& kind, const std::string& module, const std::string& target,
                   const std::string& key)
    {
        ++context.hits;
        if (may_write(context)) plan_.writes.hits.push_back({&context, kind, module, target, key, ""});
    }

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
            plan_.decided.push_back(std::move(result));
        }
    }

    void warn_about_includes(const KernelSource& kernel, const CudaJob& job)
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

    // One cache root's host modules, read beside the CUDA kernels (see plan()).
    struct HostPlanning {
        CacheContext* context = nullptr;
        std::vector<std::string> warnings;  ///< what setting the root up warned, added in the plan's order
        std::exception_ptr error;
    };

    // In place, the modules are planned when added, as before: one plan over
    // the whole tree, not per root.
    std::vector<HostPlanning> host_plannings()
    {
        if (config().in_place) return {};
        std::vector<HostPlanning> plannings;
        std::size_t warned = plan_.warnings.size();
        for (const auto& kernel : plan_.kernels) {
            if (!pyccel_can_build(kernel.name)) continue;  // the walk warned
            CacheContext& context = context_for(kernel);
            if (context.host.kernels.empty()) plannings.push_back(HostPlanning{&context, {}, {}});
            context.host.kernels.push_back(&kernel);
        }
        // Roots set up here warn after the CUDA side's warnings, as in a plan made on one thread.
        if (!plannings.empty()) plannings.front().warnings = take_warnings_since(warned);
        for (auto& planning : plannings) {
            try {
                read_host(*planning.context, {});
            } catch (...) {
                planning.error = std::current_exception();
            }
        }
        return plannings;
    }

    void add_host(std::vector<HostPlanning>& plannings)
    {
        if (config().in_place) return plan_in_place();
        for (auto& planning : plannings) {
            plan_.warnings.insert(plan_.warnings.end(), planning.warnings.begin(), planning.warnings.end());
            if (planning.error) std::rethrow_exception(planning.error);
            add_host_plan(*planning.context, false);
        }
    }

    // In place, every module lives in the user's tree: one plan for all of
    // them; the first cache root serves only as scratch space and remembers
    // failures for status.
    void plan_in_place()
    {
        CacheContext* context = nullptr;
        std::vector<const KernelSource*> kernels;
        for (const auto& kernel : plan_.kernels) {
            if (!pyccel_can_build(kernel.name)) continue;  // the walk warned
            kernels.push_back(&kernel);
            if (!context) context = &context_for(kernel);
        }
        std::vector<PythonModuleFile> extra = in_place_extra_modules();
        if (kernels.empty() && extra.empty()) return;
        if (!context) context = &context_named(cache_name_of(config(), top_package_of(extra.front())));
        context->host.kernels = std::move(kernels);
        plan_host(*context, HostPlanOptions{std::move(extra), true});
    }

    std::vector<PythonModuleFile> in_place_extra_modules() const
    {
        std::vector<fs::path> trees = request().paths;
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

    void plan_host(CacheContext& context, HostPlanOptions options)
    {
        bool in_place = options.in_place;
        read_host(context, std::move(options));
        add_host_plan(context, in_place);
    }

    // Sets the root's host toolchain up and plans its modules' builds; adds
    // nothing to the plan, so that it may run beside the CUDA side's reading.
    void read_host(CacheContext& context, HostPlanOptions options)
    {
        HostContext& host = context.host;
        host.setup = prepare_host_setup(config(), context.location.name, context.probe, may_start_tools());
        host.setup.toolchain.cache_root = context.store.root().string();
        if (!host.setup.problem.empty()) return;
        bool in_place = options.in_place;
        options.record = plan_.record.get();
        host.plan = plan_host_builds(host.kernels, host.setup.toolchain, options);
        if (!in_place) host.entries = read_host_entries(context);
    }

    // What the cache holds for each planned module: read here, beside the
    // CUDA side's reading, so that adding the plan only decides.
    static std::vector<HostEntryState> read_host_entries(const CacheContext& context)
    {
        const HostPlan& plan = context.host.plan;
        const std::string& ext_suffix = context.host.setup.tools.ext_suffix;
        std::vector<HostEntryState> entries(plan.modules.size());
        for (std::size_t i = 0; i < plan.modules.size(); ++i) {
            if (!plan.modules[i].problem.empty()) continue;
            const HostJob& job = plan.jobs[i];
            entries[i].cunumpy_name = read_cunumpy_entry(context.store.root(), job.cunumpy_name, ext_suffix);
            entries[i].has_entry =
                context.store.has_entry("host", job.key, {host_artifact_file(plan.modules[i], ext_suffix)});
        }
        return entries;
    }

    void add_host_plan(CacheContext& context, bool in_place)
    {
        HostContext& host = context.host;
        if (!host.setup.warning.empty()) plan_.warnings.push_back(host.setup.warning);
        if (!host.setup.problem.empty()) {
            // A dry run that could ask the tools fails as the build would; status, which
            // asks none, lists the kernels with the reason instead.
            if (may_start_tools()) throw ToolchainError(host.setup.problem);
            for (const KernelSource* kernel : host.kernels) plan_.decided.push_back(unplanned_host(*kernel, host.setup.problem));
            return;
        }
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
            plan_.writes.failures.push_back({&context, "in-place", verdict.hit.module, "host", job.key, module.problem});
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
        if (state.kind == Kind::foreign && !state.older_than_sources && !request().replace_foreign) {
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
            plan_.writes.failures.push_back({&context, "host", result.module, "host", result.key, result.log});
            plan_.decided.push_back(std::move(result));
            return;
        }
        const HostBuildTools& tools = context.host.setup.tools;
        const HostEntryState& state = context.host.entries[index];
        const CunumpyEntry& named = state.cunumpy_name;
        if (state.has_entry) {
            JobResult hit = host_hit_result(plan, index, tools, context.store);
            if (refuse_writable_entry(context, hit, {host_artifact_file(module, tools.ext_suffix)})) return;
            count_hit(context, "host", host_label(module), "host", job.key);
            CunumpyNameHolder holder = check_cunumpy_name(plan, index, context.store, named);
            if (!holder.problem.empty() && request().dry_run) hit.cunumpy_name_problem = name_advice(holder);
            else if (!holder.problem.empty() && may_write(context)) warn_if_taken(context, index, holder);
            if (!holder.problem.empty() && may_write(context)) repoint_cunumpy_entry(context, index);
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
        std::string reason = explain_host_miss(context, index);
        if (named.kind == CunumpyEntry::Kind::folder && reason == "no entry")
            reason = "cunumpy's own build leaves imported modules out of its key";
        plan_.host_misses.push_back(HostMiss{&context, index, reason});
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
        plan_.warnings.push_back(holder.problem + "; building " + module.name +
                                 " re-points it, and cunumpy then loads that build for " + holder.other_module +
                                 " too: make the texts of " + module.file.string() + " and " +
                                 holder.other_module + " differ (a comment naming the package is enough)");
    }

    // Our entry exists: the build makes cunumpy's name point at it.
    void repoint_cunumpy_entry(CacheContext& context, std::size_t index)
    {
        const HostPlan& plan = context.host.plan;
        fs::path entry =
            host_build_folder(context.store, plan.jobs[index].key, plan.modules[index]).lexically_relative(
                context.store.root());
        plan_.writes.cunumpy_names.push_back({&context, plan.jobs[index].cunumpy_name, entry});
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

    static std::string explain_miss(const CudaMiss& miss)
    {
        auto previous = miss.context->store.latest("cuda", miss.job.kernel->module, miss.job.target);
        if (!previous) return "no entry";
        std::string change = describe_input_change(previous->inputs, miss.job.inputs);
        return change.empty() ? "no entry" : change;
    }

    BuildPlan plan_;
    bool cunumpy_warned_ = false;
    bool compiler_warned_ = false;
};

}  // namespace

BuildPlan plan_build(const BuildRequest& request)
{
    return BuildPlanner(request).plan();
}

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
        result.reason = "no record of where " + plan.request.config.python + " finds cunumpy's CUDA headers (status starts "
                        "no Python): give status the --python that `cunumpy-kernels build` got, or run build once with this "
                        "one, or pass --cunumpy-include-dir";
    }
    return result;
}

JobResult would_build(const BuildPlan& plan, const HostMiss& miss)
{
    JobResult result = plan.request.config.in_place ? in_place_base_result(miss.context->host.plan, miss.module)
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
