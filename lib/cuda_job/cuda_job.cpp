#include "cuda_job/cuda_job.hpp"

#include "compilers/artifact_check.hpp"
#include "compilers/entry_symbols.hpp"

#include <algorithm>
#include <cstdlib>

namespace ck {

using nlohmann::json;

namespace {

int architecture_number(const std::string& arch)
{
    auto underscore = arch.find('_');
    return underscore == std::string::npos ? 0 : std::atoi(arch.c_str() + underscore + 1);
}

}  // namespace

std::vector<std::string> cuda_targets(const Config& config)
{
    std::vector<std::string> targets;
    auto add = [&](const std::string& target) {
        if (std::find(targets.begin(), targets.end(), target) == targets.end()) targets.push_back(target);
    };
    std::string newest;
    for (const auto& arch : config.architectures) {
        add(arch);
        if (arch.rfind("sm_", 0) == 0 && architecture_number(arch) > architecture_number(newest)) newest = arch;
    }
    // sm_90a and sm_100f code is not forward-compatible: the PTX is of the plain family.
    if (config.ptx && !newest.empty()) add("compute_" + std::to_string(architecture_number(newest)));
    return targets;
}

json cuda_key_inputs(const KernelSource& kernel, const std::string& source_sha256, const IncludeScan& scan,
                     const std::string& compiler_identity, const std::string& target,
                     const std::vector<std::string>& options, const CompilerEnvironment& environment,
                     const KernelEntry& entry)
{
    json headers = json::object();
    for (const auto& header : scan.headers) headers[header.name] = header.sha256;
    json inputs = {
        {"format", cuda_key_format},
        {"kernel", kernel.name},
        {"source", {{"file", kernel.cuda_file->filename().string()}, {"sha256", source_sha256}}},
        {"headers", headers},
        {"absent", scan.absent},
        {"compiler", compiler_identity},
        {"target", target},
        {"options", options},
    };
    if (!scan.pre_includes.empty()) inputs["pre_includes"] = scan.pre_includes;
    if (!environment.keyed.empty()) inputs["environment"] = environment.keyed;
    if (!environment.profile_sha256.empty()) inputs["nvcc_profile"] = environment.profile_sha256;
    if (!scan.unresolved.empty()) inputs["unresolved_includes"] = scan.unresolved;
    if (!scan.computed.empty()) inputs["computed_includes"] = scan.computed;
    if (entry.is_template()) inputs["template_args"] = entry.template_args;
    return inputs;
}

std::string CudaJob::artifact_file() const { return kernel->name + "." + target + "." + artifact_extension(target); }

CudaCompileRequest compile_request(const CudaJob& job)
{
    return {
        *job.kernel->cuda_file,  job.source,       job.kernel->name, job.target,          job.options, job.include_dirs,
        job.system_include_dirs, job.pre_includes, job.headers,      job.entry.expression};
}

void check_cuda_output(const CudaJob& job, const CudaCompileOutput& output)
{
    check_artifact(output.artifact, ArtifactExpectation{job.artifact_file() + " of " + job.kernel->cuda_file->string(),
                                                        job.target, output.entry_symbol});
}

std::string manifest_identity_problem(const Manifest& manifest)
{
    auto keyed = [&](const char* name) {
        const auto& inputs = manifest.inputs;
        return inputs.is_object() && inputs.contains(name) && inputs[name].is_string() ? inputs[name].get<std::string>()
                                                                                       : std::string();
    };
    std::string kernel = keyed("kernel");
    std::string target = keyed("target");
    if (kernel.empty() || target.empty()) return "the recorded inputs name no kernel or target";
    if (manifest.kernel != kernel)
        return "the manifest says kernel " + manifest.kernel + ", its key's inputs say " + kernel;
    if (manifest.target != target)
        return "the manifest says target " + manifest.target + ", its key's inputs say " + target;
    for (const auto& artifact : manifest.artifacts)
        if (artifact.target != target)
            return artifact.file + " is listed for " + artifact.target + " in an entry for " + target;
    if (!manifest.entry_symbol.empty() && !is_entry_of(manifest.entry_symbol, kernel))
        return "its entry symbol " + manifest.entry_symbol + " is not kernel " + kernel + "'s";
    return "";
}

}  // namespace ck
