#include "build/cuda_job.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/utc_time.hpp"

#include <chrono>
#include <ctime>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

int architecture_number(const std::string& arch)
{
    auto underscore = arch.find('_');
    return underscore == std::string::npos ? 0 : std::atoi(arch.c_str() + underscore + 1);
}

JobResult base_result(const CudaJob& job)
{
    JobResult result;
    result.module = job.kernel->module;
    result.kernel = job.kernel->name;
    result.target = job.target;
    result.key = job.key;
    return result;
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
                     const std::vector<std::string>& options, const CompilerEnvironment& environment)
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
    return inputs;
}

std::string CudaJob::artifact_file() const
{
    return kernel->name + "." + target + "." + artifact_extension(target);
}

CudaCompileRequest compile_request(const CudaJob& job)
{
    return {*job.kernel->cuda_file, job.source,  job.kernel->name, job.target,  job.options,
            job.include_dirs,       job.system_include_dirs,      job.pre_includes, job.headers};
}

JobResult hit_result(const CudaJob& job, const EntryStore& store)
{
    JobResult result = base_result(job);
    result.state = JobState::hit;
    result.entry = store.entry_dir("cuda", job.key);
    result.artifacts.push_back(result.entry / job.artifact_file());
    return result;
}

JobResult run_cuda_job(const CudaJob& job, const CudaCompiler& compiler, const EntryStore& store)
{
    auto start = std::chrono::steady_clock::now();
    JobResult result = base_result(job);
    try {
        CudaCompileOutput output = compiler.compile(compile_request(job));
        result.log = output.log;
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!output.ok) {
            result.state = JobState::failed;
            store.remember_failure("cuda", job.kernel->module, job.target, job.key, result.log);
            return result;
        }
        EntryWriter writer(store.root(), "cuda", job.key);
        Manifest manifest;
        manifest.key = job.key;
        manifest.kind = "cuda";
        manifest.module = job.kernel->module;
        manifest.kernel = job.kernel->name;
        manifest.entry_symbol = output.entry_symbol;
        manifest.target = job.target;
        manifest.inputs = job.inputs;
        manifest.artifacts.push_back(writer.add_file(job.artifact_file(), job.target, output.artifact));
        manifest.built_at = util::utc_now();
        manifest.seconds = result.seconds;
        manifest.log = output.log;
        manifest.compiler_dependencies = output.dependencies;
        result.entry = writer.commit(manifest);
        store.remember_latest("cuda", job.kernel->module, job.target, job.key);
        store.forget_failure("cuda", job.kernel->module, job.target);
        for (const auto& artifact : manifest.artifacts) result.artifacts.push_back(result.entry / artifact.file);
        result.state = JobState::built;
    } catch (const Error& error) {
        result.state = JobState::failed;
        result.log += (result.log.empty() ? "" : "\n") + std::string(error.what());
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace ck
