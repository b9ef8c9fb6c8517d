// CuPy's on-disk kernel cache, filled the way cunumpy's first call of a CUDA
// kernel fills it: a Python child process (lib/cupy_cache/cupy_cache_child.py)
// lets cunumpy build each kernel's source and options and CuPy compute its
// own key, for explicit architectures and without a GPU.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// One CUDA kernel as cunumpy's `Kernel.from_folder(package)` constructs it:
/// `CudaKernel.from_file(cuda_file, name, include_dirs=..., options=...,
/// template_args=...)`. cunumpy puts the kernel's own folder first by itself.
struct CupyKernel {
    std::string module;               ///< dotted kernel module, for reports
    std::string name;                 ///< the `__global__` function
    std::filesystem::path cuda_file;  ///< absolute
    std::vector<std::filesystem::path>
        include_dirs;                        ///< from_folder's include_dirs: the source root, then include-dirs
    std::vector<std::string> options;        ///< the user's compiler options (`options`), as written
    std::vector<std::string> template_args;  ///< cunumpy's template_args; empty for a plain kernel
};

/// What happened to one kernel for one architecture.
enum class CupyEntryState {
    hit,      ///< CuPy's cache already held the entry
    built,    ///< compiled and saved now
    missing,  ///< probe only: the cache lacks it
    failed,   ///< NVRTC or cunumpy rejected it; `message` says why
};

struct CupyEntry {
    std::size_t kernel = 0;    ///< index into the kernels given
    std::string architecture;  ///< compute capability as CuPy writes it: "90"
    CupyEntryState state = CupyEntryState::failed;
    std::string file;     ///< the entry's file name in the cache folder (`<40 hex>.cubin`); empty if unknown
    double seconds = 0;   ///< wall time in the child, the compile included
    std::string message;  ///< failed: the error, NVRTC's log included
};

/// The CuPy a run used, for reports.
struct CupyInstallation {
    /// Why CuPy could not be used at all (no Python, no CuPy, no NVRTC, an
    /// unsupported CuPy, CUPY_CACHE_IN_MEMORY); empty when it ran.
    std::string unavailable;
    std::string cupy_version;  ///< "14.2.0"; empty when no child reported
    /// CuPy's package folder. Its key holds `-I` folders inside it (and CUDA's
    /// include folder): a filled cache serves processes whose CuPy lives here.
    std::filesystem::path cupy_dir;
    std::string nvrtc_version;        ///< NVRTC as CuPy loads it: "13.0"
    std::filesystem::path cache_dir;  ///< the folder CuPy read and wrote

    /// "CuPy 14.2.0 in <folder>, NVRTC 13.0; <cache folder>"; empty when no
    /// child reported, or CuPy was unavailable.
    std::string description() const;
};

/// {"unavailable", "cupy_version", "cupy_dir", "nvrtc_version", "cache_dir"}.
nlohmann::json to_json(const CupyInstallation& installation);

/// One run over the kernels.
struct CupyCacheRun {
    CupyInstallation installation;
    std::vector<CupyEntry> entries;  ///< kernels x architectures, kernel-major, in the order given
};

struct CupyCacheRequest {
    std::string python = "python3";                  ///< the interpreter with CuPy and cunumpy (name in PATH or path)
    std::vector<std::string> architectures;          ///< compute capabilities, "90" (see cupy_architectures)
    std::optional<std::filesystem::path> cache_dir;  ///< CUPY_CACHE_DIR for the child; unset: CuPy's own choice
    bool probe = false;                              ///< only look entries up: compile nothing
    int processes = 1;                               ///< child processes that share the work
};

/// The compute capabilities CuPy compiles for, from build targets: `sm_90`,
/// `sm_90a` and `compute_90` all give "90" (CuPy compiles for the device's
/// own capability), in first-seen order, once each.
std::vector<std::string> cupy_architectures(const std::vector<std::string>& targets);

/// Compiles (or, with `request.probe`, looks up) every kernel for every
/// architecture through CuPy, as cunumpy's CudaKernel.compile() would on a
/// device of that compute capability, in `request.processes` children.
/// CuPy writes each entry atomically (a temporary file, then a rename).
/// Never throws for what the child reports: a kernel NVRTC rejects is a
/// failed entry, a Python without CuPy makes `installation.unavailable` say so. Throws
/// ToolchainError only when the scratch folder cannot be made.
CupyCacheRun run_cupy_cache(const CupyCacheRequest& request, const std::vector<CupyKernel>& kernels);

}  // namespace ck
