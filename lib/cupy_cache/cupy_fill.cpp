#include "cupy_cache/cupy_fill.hpp"

#include "cupy_cache/cupy_cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "signatures/kernel_entry.hpp"
#include "util/job_pool.hpp"
#include "util/file_util.hpp"

namespace ck {

namespace fs = std::filesystem;

namespace {

JobResult cupy_job(const KernelSource& kernel, const std::string& architecture)
{
    JobResult job;
    job.module = kernel.module;
    job.kernel = kernel.name;
    job.kind = "cupy";
    job.target = "sm_" + architecture;
    return job;
}

JobState job_state(CupyEntryState state)
{
    switch (state) {
        case CupyEntryState::hit:
            return JobState::hit;
        case CupyEntryState::built:
            return JobState::built;
        case CupyEntryState::missing:
            return JobState::would_build;
        case CupyEntryState::failed:
            return JobState::failed;
    }
    return JobState::failed;
}

JobResult result_of(const KernelSource& kernel, const CupyEntry& entry, const fs::path& cache_dir)
{
    JobResult job = cupy_job(kernel, entry.architecture);
    job.state = job_state(entry.state);
    job.seconds = entry.seconds;
    job.log = entry.message;
    if (!entry.file.empty()) {
        job.key = fs::path(entry.file).stem().string();
        job.entry = cache_dir;
        if (entry.state == CupyEntryState::hit || entry.state == CupyEntryState::built)
            job.artifacts.push_back(cache_dir / entry.file);
    }
    if (entry.state == CupyEntryState::built || entry.state == CupyEntryState::missing) job.reason = "no entry";
    return job;
}

// Failures go where the tool's own are kept, so that status, which compiles
// nothing, can tell a kernel NVRTC rejected from one never filled. A cache
// that cannot be written only loses that record.
void remember_outcome(const KernelSource& kernel, const Config& config, const JobResult& job)
{
    if (job.key.empty()) return;
    try {
        EntryStore store(
            resolve_cache_location(cache_name_of(config, kernel.top_package), config.cache_dir, false).root);
        if (job.state == JobState::failed)
            store.remember_failure("cupy", job.module, job.target, job.key, job.log);
        else
            store.forget_failure("cupy", job.module, job.target);
    } catch (const Error&) {
    }
}

}  // namespace

CupyFill fill_cupy_cache(const std::vector<KernelSource>& kernels, const Config& config,
                         const std::optional<fs::path>& cache_dir, bool probe)
{
    CupyCacheRequest request;
    request.python = config.python;
    request.architectures = cupy_architectures(config.architectures);
    request.cache_dir = cache_dir;
    request.probe = probe;
    request.processes = job_count(config.jobs);

    std::error_code io_error;
    if (cache_dir && fs::exists(*cache_dir, io_error) && !fs::is_directory(*cache_dir, io_error))
        throw UsageError("--cupy-cache-dir " + cache_dir->string() + " is not a folder");
    CupyFill fill;
    std::vector<const KernelSource*> sources;
    std::vector<CupyKernel> cupy_kernels;
    for (const auto& kernel : kernels) {
        if (!kernel.cuda_file) continue;
        CupyKernel cupy{
            kernel.module, kernel.name, *kernel.cuda_file, {kernel.source_root}, config.options_as_written, {}};
        cupy.include_dirs.insert(cupy.include_dirs.end(), config.include_dirs.begin(), config.include_dirs.end());
        try {
            cupy.template_args = kernel_entry(kernel, config, util::read_file(*kernel.cuda_file)).template_args;
        } catch (const Error& error) {  // the tool's own CUDA job reports it too; CuPy would not get further
            for (const auto& architecture : request.architectures) {
                fill.jobs.push_back(cupy_job(kernel, architecture));
                fill.jobs.back().log = error.what();
            }
            continue;
        }
        sources.push_back(&kernel);
        cupy_kernels.push_back(std::move(cupy));
    }

    CupyCacheRun run = run_cupy_cache(request, cupy_kernels);
    fill.installation = run.installation;
    if (!run.installation.unavailable.empty()) {
        fill.jobs.clear();
        return fill;
    }
    for (const auto& entry : run.entries) {
        fill.jobs.push_back(result_of(*sources[entry.kernel], entry, run.installation.cache_dir));
        if (!probe) remember_outcome(*sources[entry.kernel], config, fill.jobs.back());
    }
    return fill;
}

}  // namespace ck
