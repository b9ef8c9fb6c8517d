// The kernel model: which folders are kernels, what implementations each has,
// and where its includes are searched. One model serves every command and the
// runtime library.
//
// The rules are cunumpy 0.7.1's (KernelCatalog.from_package and
// Kernel.from_folder): subfolder `<name>` is a kernel when it holds
// `<name><host_suffix>.py` (default `_kernels`) and that module binds `<name>`;
// `<name>_numba.py` and `<name>_numpy.py` beside it are further host
// implementations; `<name><cuda_suffix>` (default `_cuda.cu`) in it is the
// CUDA kernel, whose entry is `__global__ void <name>(...)`.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/export.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// One host implementation file of a kernel.
struct HostImplementation {
    std::string kind;            ///< "pyccel", "numba" or "numpy" (cunumpy's implementation names)
    std::filesystem::path file;  ///< the module's path
};

/// A kernel folder as found on disk.
struct CK_API KernelSource {
    std::string name;                                ///< the folder name, also the function name on both sides
    std::filesystem::path folder;                    ///< absolute, symlinks as walked
    std::filesystem::path source_root;               ///< folder holding the top-level Python package
    std::string top_package;                         ///< name of the top-level package (default cache name)
    std::string module;                              ///< dotted name of the folder, e.g. my_sim.kernels.push
    std::vector<HostImplementation> host;            ///< in cunumpy's preference order: pyccel, numba, numpy
    std::optional<std::filesystem::path> cuda_file;  ///< cuda_file_name(), when ported
    /// `<name><cuda_suffix>.cu` when it exists and cuda_file does not: a suffix
    /// spelled without its extension (`_cuda`), which cunumpy would not find.
    /// The walk warns; it is not the CUDA kernel.
    std::optional<std::filesystem::path> misspelled_cuda_file;

    /// The include search path of the CUDA kernel, in order: the kernel's own
    /// folder, the source root, then `config.include_dirs`. cunumpy's header
    /// folder is searched last and is added by the compiler layer (it needs a
    /// Python probe, done only when an include is not found here).
    std::vector<std::filesystem::path> include_dirs(const Config& config) const;
};

/// Fortran's limit on a name, which Pyccel's wrapper module name must fit.
inline constexpr std::size_t fortran_name_limit = 63;

/// The longest kernel name Pyccel's Fortran backend compiles with this host
/// suffix: the wrapper module `bind_c_<name><host_suffix>` must fit
/// fortran_name_limit (48 for `_kernels`), as cunumpy's from_folder warns.
CK_API std::size_t max_kernel_name_length(const std::string& host_suffix);

/// True when Pyccel can build a kernel of this name: ASCII letters, digits and
/// `_`, not starting with a digit. Python (and so cunumpy) also imports names
/// with other Unicode letters; their host build is skipped.
CK_API bool pyccel_can_build(const std::string& name);

/// The CUDA source's file name: `<name><cuda_suffix>`, literally, as cunumpy's
/// from_folder builds it (default `_cuda.cu`).
CK_API std::string cuda_file_name(const std::string& name, const Config& config);

/// Called for each problem that does not stop the walk (a long name, a symlink
/// loop); the message names the folder.
using WalkWarning = std::function<void(const std::string& message)>;

/// Finds every kernel under `paths`. Each path is one kernel folder, a kernel
/// package (a folder whose subfolders are kernels) or any tree holding kernel
/// packages at any depth. A folder that holds kernel folders below it is a
/// package, never a kernel itself, even when it holds `<name>_kernels.py`.
/// A folder whose host module never binds `<name>` is not a kernel: `warn`
/// says so, naming the module (cunumpy raises AttributeError there). Hidden
/// folders, `__pycache__` and `__pyccel__` are skipped; symlinked folders are followed, each real folder visited once.
/// A kernel found through two paths is listed once. The result is sorted by
/// module name.
///
/// Throws UsageError when a path does not exist or is not a folder, and
/// SourceError when a folder cannot be listed.
CK_API std::vector<KernelSource> find_kernels(const std::vector<std::filesystem::path>& paths, const Config& config,
                                              WalkWarning warn = {});

/// The kernel `file` belongs to (its host module, CUDA source, a stub in its
/// `__pyccel__/`, or any file in its folder), or nothing. A folder that holds
/// kernel folders below it is a package, as for find_kernels: its files belong
/// to no kernel.
CK_API std::optional<KernelSource> kernel_of_file(const std::filesystem::path& file, const Config& config);

/// The kernels that `paths` name, as `check-signatures` and pre-commit give them: a folder
/// is walked as find_kernels walks it; a file stands for the kernel it
/// belongs to (a host module, a CUDA source, a stub in `__pyccel__/`, any
/// file of a kernel folder), a header (`.cuh`, `.h`, `.hpp`, ...) for every
/// kernel of its tree (its pyproject.toml's folder, else its package's source
/// root) whose CUDA source includes it, directly or through other headers,
/// and a file that belongs to no kernel is skipped. Each kernel once, sorted
/// by module.
///
/// Throws UsageError when a path does not exist.
CK_API std::vector<KernelSource> kernels_of_paths(const std::vector<std::filesystem::path>& paths, const Config& config,
                                                  WalkWarning warn = {});

}  // namespace ck
