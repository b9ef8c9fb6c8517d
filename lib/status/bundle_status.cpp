#include "status/bundle_status.hpp"
#include "util/json_text.hpp"

#include "builder/build_plan.hpp"
#include "compilers/cuda_compiler.hpp"
#include "explain/input_change.hpp"
#include "runtime/bundle_check.hpp"
#include "runtime/bundle_format.hpp"
#include "runtime/cached_host.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The tree's kernels now, with each CUDA job's key and key inputs.
struct TreeKeys {
    std::map<std::string, KernelSource> kernels;  ///< by name
    std::map<std::string, JobResult> jobs;        ///< by module@target
    std::map<std::string, json> inputs;           ///< by module@target, where known
    std::vector<std::string> warnings;
};

std::string job_name(const std::string& module, const std::string& target) { return module + "@" + target; }

TreeKeys tree_keys(const std::vector<fs::path>& paths, const Config& config)
{
    BuildRequest request;
    request.paths = paths;
    request.config = config;
    request.dry_run = true;
    request.start_tools = false;  // as status: the answers `build` recorded
    request.host = false;
    BuildPlan plan = plan_build(request);
    TreeKeys keys;
    for (const auto& kernel : plan.kernels) keys.kernels.emplace(kernel.name, kernel);
    for (const auto& miss : plan.cuda_misses)
        keys.inputs[job_name(miss.job.kernel->module, miss.job.target)] = miss.job.inputs;
    for (auto& job : preview_build(plan).jobs) keys.jobs.emplace(job_name(job.module, job.target), std::move(job));
    keys.warnings = plan.warnings;
    return keys;
}

// A hit's inputs are its entry's; a miss's were planned.
json inputs_of(const TreeKeys& keys, const JobResult& job)
{
    auto planned = keys.inputs.find(job_name(job.module, job.target));
    if (planned != keys.inputs.end()) return planned->second;
    try {
        auto manifest = util::parse_json(util::read_file(job.entry / "manifest.json"));
        return Manifest::from_json(manifest, job.entry.string()).inputs;
    } catch (const std::exception&) {
        return json();  // no reason then, only the keys
    }
}

BundleArtifactStatus compare_artifact(const TreeKeys& keys, const std::string& module, const BundleArtifact& stored)
{
    BundleArtifactStatus status{stored.target, "current", stored.key, "", ""};
    auto it = keys.jobs.find(job_name(module, stored.target));
    if (it == keys.jobs.end()) return {stored.target, "changed", stored.key, "", "no longer built for this target"};
    const JobResult& job = it->second;
    status.key = job.key;
    if (job.key.empty()) {
        status.state = "unknown";
        status.reason = job.reason;
    } else if (job.key != stored.key) {
        status.state = "changed";
        status.reason = describe_input_change(stored.inputs, inputs_of(keys, job));
        if (status.reason.empty()) status.reason = "key changed";
    }
    return status;
}

// The bundled host library, when its module's source changed since: the
// ranks would run the old Pyccel version. The library's key covers the
// module's imports too, which only a build sees; its own source is what
// the runtime's lookup compares.
std::optional<BundleArtifactStatus> compare_host_library(const BundleKernel& stored, const KernelSource& now)
{
    if (!stored.host_library || now.host.empty()) return std::nullopt;
    const fs::path& source = now.host.front().file;
    std::string reason = source.string() + " changed since the bundle was made";
    try {
        if (records_current_source(stored.host_library->inputs, source)) return std::nullopt;
    } catch (const Error& error) {
        reason = error.what();
    }
    return BundleArtifactStatus{"host-library", "changed", stored.host_library->key, "", reason};
}

BundleKernelStatus compare_kernel(const TreeKeys& keys, const BundleKernel& stored, const KernelSource& now)
{
    BundleKernelStatus status{now.module, now.name, "current", "", {}};
    if (stored.cuda != now.cuda_file.has_value()) {
        status.state = "changed";
        status.reason = stored.cuda ? "CUDA kernel removed" : "CUDA kernel added";
        return status;
    }
    if (stored.module != now.module) {
        status.state = "changed";
        status.reason = "module " + stored.module + " is now " + now.module;
    }
    for (const auto& artifact : stored.artifacts) {
        status.artifacts.push_back(compare_artifact(keys, stored.module, artifact));
        const std::string& state = status.artifacts.back().state;
        if (state == "changed" || (state == "unknown" && status.state == "current")) status.state = state;
    }
    if (auto host = compare_host_library(stored, now)) {
        status.artifacts.push_back(*host);
        status.state = "changed";
    }
    return status;
}

// What the keys were computed with: the bundle's targets, compiler and
// options always (the command refuses flags for them), and the way to
// cunumpy's headers unless the command line gives one.
void use_bundle_settings(const BundleCatalog& catalog, Config& config)
{
    config.architectures = catalog.targets;
    config.ptx = false;  // the bundle's targets name its PTX already
    config.compiler = parse_compiler_kind(catalog.compiler, "the bundle's compiler");
    config.options = catalog.options;
    if (!config.cunumpy_include_dir && !catalog.cunumpy_include_dir.empty())
        config.cunumpy_include_dir = fs::path(catalog.cunumpy_include_dir);
    if (config.python == Config().python && !catalog.python.empty()) config.python = catalog.python;
}

// A bundle whose bytes were damaged since it was written (a bad copy to
// node-local storage), or whose header files an artifact under the wrong
// kernel or target, is stale whatever the tree says: the ranks would refuse
// those artifacts (the same check_bundle_artifact).
std::optional<BundleKernelStatus> corrupt_artifacts(const Bundle& bundle, const BundleKernel& stored)
{
    BundleKernelStatus status{stored.module, stored.name, "corrupt", "", {}};
    for (const auto& artifact : stored.artifacts)
        if (auto fault = find_bundle_artifact_fault(bundle, stored, artifact))
            status.artifacts.push_back({artifact.target, "corrupt", artifact.key, "",
                                        bundle.artifact_name(stored, artifact) + ": " + fault->what});
    if (status.artifacts.empty()) return std::nullopt;
    return status;
}

// The keys are computed in the cache the bundle was made from, unless the
// command line names another: its tool records (the compiler's identity)
// are there, and a default cache elsewhere would make every key unknown.
void use_bundle_cache(const BundleCatalog& catalog, bool cache_dir_given, Config& config,
                      std::vector<std::string>& warnings)
{
    if (cache_dir_given || catalog.cache_root.empty()) return;
    std::error_code error;
    if (fs::is_directory(catalog.cache_root, error)) {
        config.cache_dir = fs::path(catalog.cache_root);
        return;
    }
    warnings.push_back("the bundle was made from the cache " + catalog.cache_root +
                       ", which is not here: pass "
                       "--cache-dir with the cache `cunumpy-kernels build` filled");
}

// "" when the toolkit found now is the bundle's (or the bundle does not say,
// format 1); else a sentence naming both.
std::string toolkit_change(const BundleToolkit& made, const CudaToolkit& now)
{
    if (made.root.empty() || util::absolute_normal(now.root) == fs::path(made.root)) return {};
    return "the bundle was made with " + (made.compiler.empty() ? "" : made.compiler + " of ") + "the CUDA toolkit " +
           made.root + " (found by " + made.found_by + "); status finds " + util::absolute_normal(now.root).string() +
           " (found by " + now.found_by + ")";
}

// Keys that cannot be computed with another toolkit (its compiler never
// probed in this cache) say so, instead of asking for a build.
void blame_the_toolkit(BundleStatus& status, const std::string& made_root)
{
    for (auto& kernel : status.kernels)
        for (auto& artifact : kernel.artifacts)
            if (artifact.state == "unknown") artifact.reason = "the toolkit is not the bundle's " + made_root;
}

std::vector<fs::path> bundled_paths(const Bundle& bundle)
{
    return {bundle.catalog.paths.begin(), bundle.catalog.paths.end()};
}

}  // namespace

bool BundleStatus::current() const
{
    return std::all_of(kernels.begin(), kernels.end(),
                       [](const BundleKernelStatus& k) { return k.state == "current"; });
}

std::vector<std::string> BundleStatus::modules(const std::string& state) const
{
    std::vector<std::string> found;
    for (const auto& k : kernels)
        if (k.state == state) found.push_back(k.module);
    return found;
}

BundleStatus read_bundle_status(const fs::path& file, std::vector<fs::path> paths, const ConfigAt& config_at,
                                bool cache_dir_given)
{
    Bundle bundle = read_bundle(file);
    if (paths.empty()) paths = bundled_paths(bundle);
    Config config = config_at(paths.empty() ? fs::current_path() : paths.front());
    use_bundle_settings(bundle.catalog, config);
    std::vector<std::string> warnings;
    use_bundle_cache(bundle.catalog, cache_dir_given, config, warnings);
    TreeKeys keys = tree_keys(paths, config);
    BundleStatus status;
    status.bundle = file;
    status.created = bundle.catalog.created;
    status.targets = bundle.catalog.targets;
    status.warnings = warnings;
    status.warnings.insert(status.warnings.end(), keys.warnings.begin(), keys.warnings.end());
    status.cache_root = config.cache_dir ? util::absolute_normal(*config.cache_dir) : fs::path();
    status.toolkit = bundle.catalog.toolkit;
    status.toolkit_now = find_cuda_toolkit(config);
    status.toolkit_change = toolkit_change(status.toolkit, status.toolkit_now);
    for (const auto& stored : bundle.catalog.kernels) {
        if (auto corrupt = corrupt_artifacts(bundle, stored)) {
            status.kernels.push_back(std::move(*corrupt));
            keys.kernels.erase(stored.name);
            continue;
        }
        auto now = keys.kernels.find(stored.name);
        if (now == keys.kernels.end()) {
            status.kernels.push_back({stored.module, stored.name, "removed", "", {}});
            continue;
        }
        status.kernels.push_back(compare_kernel(keys, stored, now->second));
        keys.kernels.erase(now);
    }
    for (const auto& [name, kernel] : keys.kernels) status.kernels.push_back({kernel.module, name, "added", "", {}});
    std::sort(status.kernels.begin(), status.kernels.end(),
              [](const BundleKernelStatus& a, const BundleKernelStatus& b) { return a.module < b.module; });
    if (!status.toolkit_change.empty()) blame_the_toolkit(status, status.toolkit.root);
    return status;
}

json to_json(const BundleStatus& status, const std::function<std::string(const fs::path&)>& display)
{
    json kernels = json::array();
    for (const auto& k : status.kernels) {
        json artifacts = json::array();
        for (const auto& a : k.artifacts)
            artifacts.push_back({{"target", a.target},
                                 {"state", a.state},
                                 {"bundle_key", a.bundle_key},
                                 {"key", a.key},
                                 {"reason", a.reason}});
        kernels.push_back({{"module", k.module},
                           {"name", k.name},
                           {"state", k.state},
                           {"reason", k.reason},
                           {"artifacts", artifacts}});
    }
    json toolkit = {
        {"bundle",
         {{"root", status.toolkit.root}, {"found_by", status.toolkit.found_by}, {"compiler", status.toolkit.compiler}}},
        {"now", {{"root", status.toolkit_now.root.string()}, {"found_by", status.toolkit_now.found_by}}},
        {"change", status.toolkit_change}};
    return {{"bundle", display(status.bundle)},
            {"created", status.created},
            {"targets", status.targets},
            {"cache_root", status.cache_root.empty() ? std::string() : display(status.cache_root)},
            {"toolkit", toolkit},
            {"current", status.current()},
            {"changed", status.modules("changed")},
            {"added", status.modules("added")},
            {"removed", status.modules("removed")},
            {"unknown", status.modules("unknown")},
            {"corrupt", status.modules("corrupt")},
            {"kernels", kernels},
            {"warnings", status.warnings}};
}

}  // namespace ck
