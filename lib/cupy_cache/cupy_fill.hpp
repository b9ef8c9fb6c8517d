// `build --cupy-cache` and `status --cupy-cache`: every CUDA kernel of a
// walk put through CuPy's kernel cache as cunumpy's CUDA path compiles it
// (cupy_cache/cupy_cache.hpp), reported as jobs of kind "cupy" beside the
// tool's own.
#pragma once

#include "cache/cache.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "scheduler/job_result.hpp"
#include "cupy_cache/cupy_cache.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// CuPy's cache, as one run of `--cupy-cache` found it.
struct CupyFill {
    std::vector<JobResult> jobs;  ///< one per CUDA kernel and compute capability; target `sm_90`
    /// Which CuPy ran; when it could not (`unavailable`), there are no jobs.
    CupyInstallation installation;
};

/// Fills CuPy's cache for every kernel of `kernels` with a CUDA file, for the
/// compute capabilities of `config.architectures` (`sm_90` and `compute_90`
/// give one entry, "90"), in `config.jobs` Python processes of
/// `config.python`; with `probe`, looks the entries up and compiles nothing
/// (hits are `hit`, the rest `would_build`). Each kernel is compiled as
/// `Kernel.from_folder` makes it by default: include_dirs the source root
/// and then `include-dirs`, options `options`, template arguments as the
/// build takes them. `cache_dir` sets CUPY_CACHE_DIR; unset, CuPy's own
/// choice holds. A failed job is remembered in the tool's cache (as a
/// failed build is), so that status can say `failed`; a later success
/// forgets it. Never throws for a kernel: its jobs fail with the message.
/// Throws UsageError when `cache_dir` exists and is not a folder.
CupyFill fill_cupy_cache(const std::vector<KernelSource>& kernels, const Config& config,
                         const std::optional<std::filesystem::path>& cache_dir, bool probe);

}  // namespace ck
