// Computing CUDA jobs (targets, key inputs, keys) without compiling anything.
// One implementation for `build`, `status` and the runtime library, so that
// all three agree on every key.
#pragma once

#include "build/cuda_job.hpp"
#include "compilers/include_scanner.hpp"

#include <functional>
#include <optional>

namespace ck {

class ToolProbe;

/// Answers where cunumpy's CUDA headers are, asked at most once per planner
/// and only when an include is found nowhere else.
using CunumpyDirResolver = std::function<std::optional<std::filesystem::path>()>;

/// The resolver of `config`: `cunumpy-include-dir` when set; else, when
/// `may_start_python`, the Python probe (remembered in `probe`); else only a
/// probe answer remembered earlier. The runtime library passes false: it
/// never starts a process.
CunumpyDirResolver cunumpy_dir_resolver(const Config& config, const ToolProbe& probe, bool may_start_python);

class CudaPlanner {
public:
    /// `compiler_identity` is the identity() of the compiler that builds.
    CudaPlanner(const Config& config, std::string compiler_identity, CunumpyDirResolver cunumpy_dir);

    /// The jobs of a ported kernel, one per target of cuda_targets(config).
    /// Header digests are read once per planner. Throws SourceError when the
    /// source or an included header cannot be read.
    std::vector<CudaJob> plan(const KernelSource& kernel);

private:
    std::vector<SearchDir> search_dirs(const KernelSource& kernel) const;

    const Config& config_;
    std::string compiler_identity_;
    std::vector<std::string> targets_;
    IncludeScanner scanner_;
};

}  // namespace ck
