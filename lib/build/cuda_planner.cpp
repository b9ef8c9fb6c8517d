#include "build/cuda_planner.hpp"

#include "compilers/python_probe.hpp"
#include "compilers/tool_probe.hpp"
#include "util/file_util.hpp"

namespace ck {

namespace fs = std::filesystem;

CunumpyDirResolver cunumpy_dir_resolver(const Config& config, const ToolProbe& probe, bool may_start_python)
{
    auto configured = config.cunumpy_include_dir;
    std::string python = config.python;
    const ToolProbe* remembered = &probe;
    return [configured, python, remembered, may_start_python]() -> std::optional<fs::path> {
        if (configured) return configured;
        if (may_start_python) return find_cunumpy_include_dir(python, *remembered);
        return find_remembered_cunumpy_include_dir(python, *remembered);
    };
}

CudaPlanner::CudaPlanner(const Config& config, std::string compiler_identity, CunumpyDirResolver cunumpy_dir)
    : config_(config),
      compiler_identity_(std::move(compiler_identity)),
      targets_(cuda_targets(config)),
      scanner_(std::move(cunumpy_dir))
{
}

std::vector<SearchDir> CudaPlanner::search_dirs(const KernelSource& kernel) const
{
    std::vector<SearchDir> dirs = {{kernel.folder, ""}, {kernel.source_root, ""}};
    for (std::size_t i = 0; i < config_.include_dirs.size(); ++i)
        dirs.push_back({config_.include_dirs[i], "<include:" + std::to_string(i) + ">"});
    return dirs;
}

std::vector<CudaJob> CudaPlanner::plan(const KernelSource& kernel)
{
    std::vector<CudaJob> jobs;
    if (!kernel.cuda_file) return jobs;
    std::string source = util::read_file(*kernel.cuda_file);
    IncludeScan scan = scanner_.scan(*kernel.cuda_file, source, search_dirs(kernel));
    std::vector<fs::path> include_dirs = kernel.include_dirs(config_);
    if (auto late = scanner_.late_dir_if_known()) include_dirs.push_back(*late);
    std::string source_sha256 = sha256_hex(source);
    for (const auto& target : targets_) {
        CudaJob job{&kernel, target, source, include_dirs, {}, {}};
        job.inputs = cuda_key_inputs(kernel, source_sha256, scan, compiler_identity_, target, config_.options);
        job.key = cache_key(job.inputs);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

}  // namespace ck
