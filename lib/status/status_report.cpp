// read_status: one dry-run build plan that starts no tool, read per kernel
// beside the kernel's signatures.
#include "status/status.hpp"

#include "builder/build_plan.hpp"
#include "cupy_cache/cupy_fill.hpp"
#include "cupy_cache/cupy_cache.hpp"
#include "package/porting_summary.hpp"
#include "runtime/cached_host.hpp"
#include "struct_headers/cubin_layout_checker.hpp"
#include "util/file_util.hpp"
#include "util/json_text.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <map>

namespace ck {

namespace fs = std::filesystem;

namespace {

// Host builds join the plan with a `kind` of their own; CUDA jobs have none
// yet. Reading it where it exists keeps status generic over every job kind.
template <typename Job>
std::string kind_of(const Job& job)
{
    if constexpr (requires { std::string(job.kind); })
        return std::string(job.kind);
    else if constexpr (requires { to_string(job.kind); })
        return std::string(to_string(job.kind));
    else
        return "cuda";
}

// The first line that says something: Pyccel's log starts with a blank one.
std::string first_line(const std::string& text)
{
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return "(no message)";
}

// A message planning wrote, without the blank lines around it (the first
// line that says something keeps its indentation).
std::string planning_message(const std::string& text)
{
    std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "(no message)";
    std::size_t line_start = text.rfind('\n', first);
    std::size_t start = line_start == std::string::npos ? 0 : line_start + 1;
    return text.substr(start, text.find_last_not_of(" \t\r\n") + 1 - start);
}

class CacheReader {
public:
    CacheReader(const Config& config, const BuildPlan& plan) : config_(config), plan_(plan) {}

    ArtifactStatus artifact(const std::string& cache_name, const JobResult& job)
    {
        ArtifactStatus status{kind_of(job), job.target, ArtifactState::built, "", job.key};
        if (!job.foreign.empty()) {
            status.state = ArtifactState::foreign;
            status.reason = job.foreign;
            return status;
        }
        if (!job.cunumpy_name_problem.empty()) {  // our build exists, but cunumpy would load another
            status.state = ArtifactState::stale;
            status.reason = job.cunumpy_name_problem;
            return status;
        }
        if (job.state == JobState::hit || job.state == JobState::built) return status;
        if (job.state == JobState::failed) {  // found while planning: an import cycle, an unreadable source
            // Whole: a header not found names the folders searched on the lines after it.
            status.state = ArtifactState::failed;
            status.reason = planning_message(job.log.empty() ? job.reason : job.log);
            return status;
        }
        if (job.key.empty()) {
            status.state = ArtifactState::unknown;
            status.reason = job.reason;
            return status;
        }
        if (auto failure = store_of(cache_name).failure(status.kind, job.module, job.target);
            failure && failure->value("key", std::string()) == job.key) {
            status.state = ArtifactState::failed;
            status.reason = "failed last time: " + first_line(failure->value("log", std::string()));
            return status;
        }
        status.state = job.reason == "no entry" ? ArtifactState::missing : ArtifactState::stale;
        status.reason = job.reason == "no entry" ? "" : job.reason;
        return status;
    }

private:
    // The store the build would use: the plan's root for the name (the
    // fallback where the preferred root cannot be written), else the same rules.
    const EntryStore& store_of(const std::string& name)
    {
        if (auto planned = plan_.contexts.find(name); planned != plan_.contexts.end()) return planned->second->store;
        auto it = stores_.find(name);
        if (it == stores_.end())
            it = stores_.emplace(name, EntryStore(planned_cache_location(name, config_.cache_dir).root)).first;
        return it->second;
    }

    const Config& config_;
    const BuildPlan& plan_;
    std::map<std::string, EntryStore> stores_;
};

// A built cubin that lays out the parameters otherwise than the runtime
// packs them is no usable artifact: status reports it failed, with why (the
// check build runs on hits and compiles alike).
void check_layout(CubinLayoutChecker& checker, const KernelSource& kernel, const JobResult& job, ArtifactStatus& status)
{
    if (status.state != ArtifactState::built) return;
    std::string problem = checker.problem(kernel, job);
    if (problem.empty()) return;
    status.state = ArtifactState::failed;
    status.reason = problem;
    status.layout_mismatch = true;
}

// What the catalog would warn about, read from the library of the module's
// current host entry without loading it.
std::optional<HostLibraryStatus> host_library_status(const KernelSource& kernel, const JobResult& host_job)
{
    if (host_job.state != JobState::hit || host_job.artifacts.empty()) return std::nullopt;
    auto note = host_library_note(kernel, host_job.artifacts.front());
    if (!note) return std::nullopt;
    return HostLibraryStatus{note->empty(), *note};
}

std::string kernel_list(const std::vector<std::string>& names, std::size_t max = 10)
{
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < max; ++i) text += (i ? ", " : "") + names[i];
    if (names.size() > max) text += ", ... (" + std::to_string(names.size()) + " in all)";
    return text;
}

}  // namespace

std::string porting_summary(const std::vector<KernelSource>& kernels, std::size_t max_missing)
{
    std::vector<std::string> missing;
    for (const auto& kernel : kernels)
        if (!kernel.cuda_file) missing.push_back(kernel.name);
    return porting_summary(kernels.size(), missing, max_missing);
}

const char* to_string(ArtifactState state)
{
    switch (state) {
        case ArtifactState::built:
            return "built";
        case ArtifactState::stale:
            return "stale";
        case ArtifactState::missing:
            return "missing";
        case ArtifactState::failed:
            return "failed";
        case ArtifactState::unknown:
            return "unknown";
        case ArtifactState::foreign:
            return "foreign";
    }
    return "?";
}

std::string StatusReport::summary(std::size_t max_missing) const
{
    std::vector<KernelSource> sources;
    for (const auto& k : kernels) sources.push_back(k.kernel);
    return porting_summary(sources, max_missing);
}

bool StatusReport::all_ported() const
{
    return std::all_of(kernels.begin(), kernels.end(),
                       [](const KernelStatus& k) { return k.kernel.cuda_file.has_value(); });
}

bool StatusReport::all_built() const
{
    auto built = [](const ArtifactStatus& a) { return a.state == ArtifactState::built; };
    return std::all_of(
               kernels.begin(), kernels.end(),
               [&](const KernelStatus& k) { return std::all_of(k.artifacts.begin(), k.artifacts.end(), built); }) &&
           std::all_of(modules.begin(), modules.end(), [&](const ModuleStatus& m) { return built(m.artifact); });
}

namespace {

// Warnings (cunumpy cannot read a declaration that agrees) are check-signatures'
// to report; the gate is about declarations that disagree or cannot be read.
bool has_errors(const KernelSignatures& signatures)
{
    return std::any_of(signatures.findings.begin(), signatures.findings.end(),
                       [](const SignatureFinding& f) { return f.severity == SignatureFinding::Severity::error; });
}

// A Python that cannot run the writers leaves every header unchecked: one
// finding, on the configuration that names it, as status reports what it
// cannot know rather than failing.
std::vector<StructHeaderFinding> struct_header_findings(const Config& config, SourceRecord& record)
{
    try {
        return check_struct_headers(config, record).findings;
    } catch (const ToolchainError& error) {
        return {{config.source_file, "", error.what(), "", ""}};
    }
}

}  // namespace

bool StatusReport::signatures_agree() const
{
    return struct_headers.empty() &&
           std::none_of(kernels.begin(), kernels.end(), [](const KernelStatus& k) { return has_errors(k.signatures); });
}

StatusReport read_status(const StatusRequest& request)
{
    BuildRequest plan;
    plan.paths = request.paths;
    plan.config = request.config;
    plan.dry_run = true;
    plan.start_tools = false;
    plan.host = request.host;
    plan.cuda = request.cuda;
    BuildPlan planned = plan_build(plan);
    std::shared_ptr<SourceRecord> record = planned.record;
    BuildReport build = preview_build(planned);
    std::string cupy_unavailable;
    StatusReport report;
    if (request.cupy) {
        CupyFill fill = fill_cupy_cache(build.kernels, request.config, request.cupy_cache_dir, true);
        cupy_unavailable = fill.installation.unavailable;
        report.cupy = fill.installation;
        for (auto& job : fill.jobs) build.jobs.push_back(std::move(job));
    }
    std::multimap<std::string, const JobResult*> jobs;
    for (const auto& job : build.jobs) jobs.emplace(job.module, &job);
    CacheReader cache(request.config, planned);
    CubinLayoutChecker layouts(request.config, *record);
    report.warnings = build.warnings;
    std::string first_cache_name;
    signatures::HeaderCache headers;
    std::vector<KernelSignatures> checked = check_signatures(build.kernels, request.config, {}, &headers, record.get());
    for (std::size_t k = 0; k < build.kernels.size(); ++k) {
        const KernelSource& kernel = build.kernels[k];
        KernelStatus status{kernel, std::move(checked[k]), {}, std::nullopt};
        std::string cache_name = cache_name_of(request.config, kernel.top_package);
        if (first_cache_name.empty() && pyccel_can_build(kernel.name)) first_cache_name = cache_name;
        auto [begin, end] = jobs.equal_range(kernel.module);
        for (auto it = begin; it != end; ++it) {
            // The kernel's own Pyccel module: jobs of modules it imports are under their own names.
            bool pyccel = !kernel.host.empty() && kernel.host.front().kind == "pyccel";
            if (request.host && pyccel && it->second->kind == "host")
                status.host_library = host_library_status(kernel, *it->second);
            status.artifacts.push_back(cache.artifact(cache_name, *it->second));
            check_layout(layouts, kernel, *it->second, status.artifacts.back());
        }
        if (!cupy_unavailable.empty() && kernel.cuda_file)
            for (const auto& architecture : cupy_architectures(request.config.architectures))
                status.artifacts.push_back(
                    {"cupy", "sm_" + architecture, ArtifactState::unknown, cupy_unavailable, ""});
        report.kernels.push_back(std::move(status));
    }
    // In place, the modules kernels import are built beside their sources too; one
    // cache root (the first kernel's) remembers their failures.
    for (const auto& job : build.jobs) {
        if (job.kind != "in-place" || !job.kernel.empty()) continue;
        std::string top = job.host_module.substr(0, job.host_module.find('.'));
        std::string name = first_cache_name.empty() ? cache_name_of(request.config, top) : first_cache_name;
        report.modules.push_back({job.module, cache.artifact(name, job)});
    }
    report.struct_headers = struct_header_findings(request.config, *record);
    record->save();
    return report;
}

namespace {

// A finding without a writer is the whole check's (the interpreter cannot run).
std::string struct_headers_failure(const std::vector<StructHeaderFinding>& findings)
{
    for (const auto& finding : findings)
        if (finding.writer.empty()) return "the struct headers cannot be checked: " + finding.problem;
    return util::counted(findings.size(), "struct header is", "struct headers are") +
           " not what their writers write, or their writers failed (`cunumpy-kernels check-signatures` shows why)";
}

}  // namespace

std::vector<std::string> failed_gates(const StatusReport& report, const StatusGates& gates)
{
    std::vector<std::string> failures;
    std::vector<std::string> unported, unbuilt, disagreeing, mislaid;
    for (const auto& k : report.kernels) {
        if (!k.kernel.cuda_file) unported.push_back(k.kernel.module);
        for (const auto& a : k.artifacts)
            if (a.layout_mismatch) mislaid.push_back(k.kernel.module + " [" + a.target + "]");
        for (const auto& a : k.artifacts)
            if (a.state != ArtifactState::built)
                unbuilt.push_back(k.kernel.module + " [" + (a.kind == "cupy" ? "cupy:" : "") + a.target + "] " +
                                  to_string(a.state));
        if (has_errors(k.signatures)) disagreeing.push_back(k.kernel.module);
    }
    for (const auto& m : report.modules)
        if (m.artifact.state != ArtifactState::built)
            unbuilt.push_back(m.module + " [" + m.artifact.kind + "] " + to_string(m.artifact.state));
    // Not a gate: a cubin the runtime would launch with misplaced fields fails every command that reads it.
    if (!mislaid.empty())
        failures.push_back("parameter layout: " + util::counted(mislaid.size(), "cubin lays", "cubins lay") +
                           " out the parameters otherwise than the runtime packs them (see each artifact's reason; "
                           "regenerate the struct headers or rebuild the kernel): " +
                           kernel_list(mislaid));
    if (gates.require_cuda && !unported.empty())
        failures.push_back("--require-cuda: " + util::counted(unported.size(), "kernel has", "kernels have") +
                           " no CUDA version: " + kernel_list(unported));
    bool foreign =
        std::any_of(unbuilt.begin(), unbuilt.end(), [](const std::string& line) { return line.ends_with(" foreign"); });
    if (gates.require_built && !unbuilt.empty())
        failures.push_back("--require-built: " + util::counted(unbuilt.size(), "artifact is", "artifacts are") +
                           " not built for the current configuration (run `cunumpy-kernels build`" +
                           (foreign ? "; another tool's in-place builds: `build --in-place --replace-foreign`" : "") +
                           "): " + kernel_list(unbuilt));
    if (gates.check_signatures && !report.struct_headers.empty())
        failures.push_back("--check-signatures: " + struct_headers_failure(report.struct_headers));
    if (gates.check_signatures && !disagreeing.empty())
        failures.push_back("--check-signatures: " + util::counted(disagreeing.size(), "kernel takes", "kernels take") +
                           " different parameters or cannot be read: " + kernel_list(disagreeing) +
                           " (run `cunumpy-kernels check-signatures` for details)");
    return failures;
}

nlohmann::json to_json(const StatusReport& report, const std::function<std::string(const fs::path&)>& display)
{
    using nlohmann::json;
    json kernels = json::array(), with = json::array(), without = json::array();
    std::map<std::string, std::size_t> artifact_counts, signature_counts;
    for (const auto& k : report.kernels) {
        (k.kernel.cuda_file ? with : without).push_back(k.kernel.name);
        json host = json::array(), artifacts = json::array(), findings = json::array();
        for (const auto& h : k.kernel.host) host.push_back(h.kind);
        for (const auto& a : k.artifacts) {
            ++artifact_counts[to_string(a.state)];
            artifacts.push_back({{"kind", a.kind},
                                 {"target", a.target},
                                 {"state", to_string(a.state)},
                                 {"reason", a.reason},
                                 {"key", a.key}});
        }
        for (const auto& f : k.signatures.findings) findings.push_back(f.message);
        ++signature_counts[to_string(k.signatures.agreement())];
        kernels.push_back({{"module", k.kernel.module},
                           {"name", k.kernel.name},
                           {"folder", display(k.kernel.folder)},
                           {"host", host},
                           {"cuda", k.kernel.cuda_file ? json(display(*k.kernel.cuda_file)) : json(nullptr)},
                           {"signatures", to_string(k.signatures.agreement())},
                           {"findings", findings},
                           {"artifacts", artifacts},
                           {"host_library", k.host_library ? json{{"callable", k.host_library->callable},
                                                                  {"reason", k.host_library->reason}}
                                                           : json(nullptr)}});
    }
    json modules = json::array();
    for (const auto& m : report.modules) {
        ++artifact_counts[to_string(m.artifact.state)];
        modules.push_back({{"module", m.module},
                           {"kind", m.artifact.kind},
                           {"target", m.artifact.target},
                           {"state", to_string(m.artifact.state)},
                           {"reason", m.artifact.reason},
                           {"key", m.artifact.key}});
    }
    json result = {
        {"summary", report.summary()},
        {"with_cuda", with},
        {"without_cuda", without},
        {"counts",
         {{"kernels", report.kernels.size()}, {"artifacts", artifact_counts}, {"signatures", signature_counts}}},
        {"kernels", kernels},
        {"modules", modules},
        {"warnings", report.warnings}};
    if (report.cupy) result["cupy"] = to_json(*report.cupy);
    result["struct_headers"] = to_json(report.struct_headers, display);
    return result;
}

}  // namespace ck
