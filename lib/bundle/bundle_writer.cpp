#include "bundle/bundle_writer.hpp"

#include "builder/build_plan.hpp"
#include "compilers/artifact_check.hpp"
#include "compilers/cuda_compiler.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cuda_job/cuda_job.hpp"
#include "runtime/bundle_format.hpp"
#include "runtime/cached_host.hpp"
#include "runtime/cuda_kernel.hpp"
#include "util/atomic_file.hpp"
#include "util/file_util.hpp"
#include "util/utc_time.hpp"

#include <map>
#include <set>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The cache root of an entry folder `<root>/cuda/<k0k1>/<key>`.
fs::path root_of_entry(const fs::path& entry) { return entry.parent_path().parent_path().parent_path(); }

class BundleAssembler {
public:
    explicit BundleAssembler(const Config& config) : config_(config) {}

    void add_kernel(const KernelSource& source, const std::vector<const JobResult*>& jobs)
    {
        BundleKernel kernel{source.name, source.module, source.folder, {}, source.cuda_file.has_value(), {}, {}, {}, {},
                            {}};
        kernel.cuda_path = source.cuda_file ? *source.cuda_file : source.folder / cuda_file_name(source.name, config_);
        if (kernel.cuda) {
            CudaKernelFacts facts = read_cuda_kernel_facts(source, config_);
            kernel.parameters = std::move(facts.parameters);
            kernel.signature_error = std::move(facts.signature_error);
            for (const JobResult* job : jobs) add_artifact(kernel, *job);
        }
        add_host_library(kernel, source);
        catalog_.kernels.push_back(std::move(kernel));
    }

    /// Every artifact the cache lacks, one line each; empty when all were found.
    const std::vector<std::string>& missing() const { return missing_; }
    /// The cache roots the artifacts came from.
    const std::set<fs::path>& roots() const { return roots_; }
    BundleCatalog& catalog() { return catalog_; }
    const std::string& data() const { return data_; }

private:
    void add_artifact(BundleKernel& kernel, const JobResult& job)
    {
        if (job.state != JobState::hit) {
            std::string why = job.state == JobState::failed ? "its build failed" : job.reason;
            missing_.push_back("kernel '" + kernel.name + "' (" + kernel.module + ") for " + job.target + ": " +
                               (why.empty() ? "no entry" : why));
            return;
        }
        std::string problem;
        auto manifest = EntryStore(root_of_entry(job.entry)).find("cuda", job.key, &problem);
        if (!manifest || manifest->artifacts.empty())
            throw ArtifactError("kernel '" + kernel.name + "' for " + job.target + ": the cache entry " +
                                job.entry.string() + " cannot be read" + (problem.empty() ? "" : ": " + problem) +
                                "; run cunumpy-kernels cache verify --fix, then cunumpy-kernels build");
        const Artifact& record = manifest->artifacts.front();
        fs::path file = job.entry / record.file;
        std::string bytes = util::read_file(file);
        BundleArtifact artifact{job.target, job.key, manifest->entry_symbol, 0, 0, "", manifest->inputs};
        add_artifact_bytes(artifact, bytes, data_);
        if (artifact.sha256 != record.sha256)
            throw ArtifactError(file.string() + ": checksum mismatch (manifest sha256 " + record.sha256 + ", file " +
                                artifact.sha256 +
                                "); nothing was bundled: run cunumpy-kernels cache verify --fix, "
                                "then cunumpy-kernels build");
        check_loadable(bytes, file, job.target, manifest->entry_symbol);
        kernel.artifacts.push_back(std::move(artifact));
        roots_.insert(root_of_entry(job.entry));
    }

    // The library the runtime would load for the kernel (find_host_library),
    // or the reason there is none: a kernel without one is still bundled,
    // and its ranks are told why when they open the catalog.
    void add_host_library(BundleKernel& kernel, const KernelSource& source)
    {
        if (source.host.empty() || source.host.front().kind != "pyccel") return;
        std::string note;
        auto library = find_host_library(source, config_, &note);
        if (!library) {
            kernel.host_library_note = note.empty() ? "no current host build of " + source.module +
                                                          " with a host library; run cunumpy-kernels build "
                                                          "--only host, then bundle again"
                                                    : note;
            return;
        }
        auto bytes = read_host_library(*library, &note);
        if (!bytes) {
            kernel.host_library_note = note + ", then bundle again";
            return;
        }
        BundleArtifact artifact{"host-library", library->key, "", 0, 0, "", library->inputs};
        add_artifact_bytes(artifact, *bytes, data_);
        kernel.host_library = std::move(artifact);
    }

    // The checks `build` ran before publishing, run again on what the cache
    // holds now: a rank would refuse (check_bundle_artifact) what fails them.
    static void check_loadable(const std::string& bytes, const fs::path& file, const std::string& target,
                               const std::string& entry_symbol)
    {
        try {
            check_artifact(bytes, ArtifactExpectation{file.string(), target, entry_symbol});
        } catch (const ArtifactCheckError& error) {
            throw ArtifactError(file.string() + " for " + target + ": check '" + to_string(error.check()) +
                                "' failed: " + error.finding() +
                                "; nothing was bundled: run cunumpy-kernels cache "
                                "verify --fix, then cunumpy-kernels build");
        }
    }

    const Config& config_;
    BundleCatalog catalog_;
    std::string data_;
    std::vector<std::string> missing_;
    std::set<fs::path> roots_;
};

// The compiler identity the artifacts' keys hold (one compiler per bundle).
std::string keyed_compiler(const BundleCatalog& catalog)
{
    for (const auto& kernel : catalog.kernels)
        for (const auto& artifact : kernel.artifacts)
            if (artifact.inputs.is_object() && artifact.inputs.value("compiler", json()).is_string())
                return artifact.inputs["compiler"].get<std::string>();
    return {};
}

// Where the keys were computed, for `status --bundle`: the one cache root
// the artifacts came from (else the one build was pointed at), and the
// toolkit with the compiler identity every key holds.
void record_origin(BundleCatalog& catalog, const std::set<fs::path>& roots, const Config& config)
{
    if (roots.size() == 1)
        catalog.cache_root = util::absolute_normal(*roots.begin()).string();
    else if (roots.empty() && config.cache_dir)
        catalog.cache_root = util::absolute_normal(*config.cache_dir).string();
    CudaToolkit toolkit = find_cuda_toolkit(config);
    catalog.toolkit.root = util::absolute_normal(toolkit.root).string();
    catalog.toolkit.found_by = toolkit.found_by;
    catalog.toolkit.compiler = keyed_compiler(catalog);
}

BuildRequest planning_request(const BundleRequest& request)
{
    BuildRequest plan;
    plan.paths = request.paths;
    plan.config = request.config;
    plan.dry_run = true;
    plan.start_tools = false;  // the keys `build` recorded are enough; a bundle never compiles
    plan.host = false;
    return plan;
}

std::string describe_paths(const BundleRequest& request)
{
    if (request.paths.empty()) return fs::current_path().string();
    std::string text;
    for (const auto& path : request.paths) text += (text.empty() ? "" : ", ") + path.string();
    return text;
}

[[noreturn]] void throw_missing(const std::vector<std::string>& missing, const BundleRequest& request)
{
    std::string text = "cannot bundle into " + request.output.string() + ": the cache lacks " +
                       std::to_string(missing.size()) + " current artifact" + (missing.size() == 1 ? "" : "s") + ":";
    for (const auto& line : missing) text += "\n  " + line;
    text +=
        "\nrun cunumpy-kernels build with the same paths and options (--arch, --ptx, --compiler, "
        "--compiler-option, tree flags), then bundle again";
    throw ArtifactError(text);
}

// Refused before any work, in the words of the path the user gave: the
// temporary file's name would mean nothing to them.
void check_output(const fs::path& output)
{
    std::error_code error;
    if (output.filename().empty() || fs::is_directory(output, error))
        throw UsageError(output.string() + " names a folder: give --output the bundle's file name, e.g. " +
                         (output / "kernels.ckb").string());
    fs::path folder = output.parent_path().empty() ? fs::path(".") : output.parent_path();
    if (fs::is_directory(folder, error)) return;
    throw UsageError("cannot write " + output.string() + ": " + folder.string() +
                     (fs::exists(folder, error) ? " is not a folder" : " does not exist; create it first"));
}

void publish(const fs::path& output, const std::string& bytes)
{
    try {
        util::AtomicFile file(output);
        file.write(bytes);
        file.commit();
    } catch (const CacheError& error) {
        throw CacheError("cannot write the bundle " + output.string() + " (" + error.what() + ")");
    }
}

}  // namespace

BundleSummary write_bundle(const BundleRequest& request)
{
    check_output(request.output);
    BuildReport report = preview_build(plan_build(planning_request(request)));
    if (report.kernels.empty())
        throw UsageError("no kernels under " + describe_paths(request) + " (<name>/<name>" +
                         request.config.host_suffix + ".py): nothing to bundle; give the kernel tree, e.g. src/");
    // Each kernel's artifacts in the order of the targets, as build names them (sm_80, sm_90, compute_90).
    std::vector<std::string> targets = cuda_targets(request.config);
    std::map<std::string, std::vector<const JobResult*>> jobs;  // by module
    for (const auto& target : targets)
        for (const auto& job : report.jobs)
            if (job.target == target) jobs[job.module].push_back(&job);
    BundleAssembler assembler(request.config);
    BundleSummary summary;
    for (const auto& kernel : report.kernels) {
        assembler.add_kernel(kernel, jobs[kernel.module]);
        summary.ported += kernel.cuda_file ? 1 : 0;
        summary.artifacts += kernel.cuda_file ? jobs[kernel.module].size() : 0;
    }
    if (!assembler.missing().empty()) throw_missing(assembler.missing(), request);
    BundleCatalog& catalog = assembler.catalog();
    catalog.tool = std::string("cunumpy-kernels ") + CUNUMPY_KERNELS_VERSION;
    catalog.created = util::utc_now();
    for (const auto& path : request.paths) catalog.paths.push_back(util::absolute_normal(path).string());
    if (catalog.paths.empty()) catalog.paths.push_back(util::absolute_normal(fs::current_path()).string());
    catalog.targets = summary.ported ? targets : std::vector<std::string>{};
    catalog.compiler = to_string(request.config.compiler);
    catalog.options = request.config.options;
    catalog.python = request.config.python;
    if (request.config.cunumpy_include_dir) catalog.cunumpy_include_dir = request.config.cunumpy_include_dir->string();
    catalog.host_platform = host_platform();
    record_origin(catalog, assembler.roots(), request.config);
    std::string bytes = encode_bundle(catalog, assembler.data());
    publish(request.output, bytes);
    summary.output = request.output;
    summary.kernels = report.kernels.size();
    summary.targets = catalog.targets;
    summary.bytes = bytes.size();
    summary.warnings = report.warnings;
    for (const auto& kernel : catalog.kernels)
        if (!kernel.host_library_note.empty())
            summary.warnings.push_back("kernel '" + kernel.name +
                                       "': no host library in the bundle: " + kernel.host_library_note);
    return summary;
}

}  // namespace ck
