// Options of a kernel tree: defaults, `[tool.cunumpy-kernels]` in the nearest
// pyproject.toml, then command-line flags, each overriding the one before.
#pragma once

#include "cunumpy_kernels/export.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// Which CUDA compiler builds the cubins.
enum class CudaCompilerKind { nvrtc, nvcc };

/// The default architectures: A100 (sm_80) and H100/H200 (sm_90) cubins, plus
/// PTX of the newest so that later GPUs JIT-compile it. CUDA 13 dropped
/// everything below sm_75, so older defaults would not build.
inline const std::vector<std::string> default_architectures = {"sm_80", "sm_90"};

/// Every option a kernel tree can set. The field comment names its key in
/// `[tool.cunumpy-kernels]`; man/cunumpy-kernels.5.scd documents them all.
struct Config {
    std::string host_suffix = "_kernels";  ///< host-suffix: `<name><suffix>.py` is the host kernel
    std::string cuda_suffix =
        "_cuda.cu";  ///< cuda-suffix: `<name><suffix>` is the CUDA kernel, as cunumpy's cuda_suffix
    std::vector<std::string> architectures = default_architectures;  ///< arch: `sm_XX` cubin targets
    bool ptx = true;                                                 ///< ptx: also emit PTX of the newest arch
    CudaCompilerKind compiler = CudaCompilerKind::nvrtc;             ///< compiler: "nvrtc" or "nvcc"
    std::vector<std::string>
        options;  ///< options: extra compiler options (`-D...`, `-std=...`), include paths and options files made
                  ///< absolute; then verbatim-options, each as `--verbatim-option=X`
    /// The same options exactly as written (pyproject.toml, then
    /// --compiler-option): what an application passes to cunumpy's
    /// `options=`, and so what CuPy's key holds (`build --cupy-cache`).
    std::vector<std::string> options_as_written;
    std::vector<std::filesystem::path> include_dirs;  ///< include-dirs: searched after the package's own
    std::optional<std::filesystem::path> cache_dir;   ///< cache-dir: the cache root, overriding cunumpy's
    std::optional<std::string> cache_name;            ///< cache-name: PyccelCache name; default: top-level package
    std::optional<int> jobs;                          ///< jobs: parallel compilations; default: cores
    std::string python = "python3";                   ///< python: interpreter that finds cunumpy's headers
    std::optional<std::filesystem::path> cunumpy_include_dir;  ///< cunumpy-include-dir: skip the Python probe
    bool check_name_length = true;                             ///< check-name-length: warn on names over 48 characters
    std::filesystem::path
        cuda_root;  ///< cuda-root: toolkit of nvcc/NVRTC; empty: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda
    std::string language =
        "c";  ///< language: Pyccel's target for host kernels, "c" (PyccelCache's default) or "fortran"
    std::optional<bool> openmp;  ///< openmp: host builds with OpenMP; unset: as `<NAME>_OPENMP` says, default on
    /// in-place: build host modules beside their sources, as `pyccel compile`
    /// without `--output` does, instead of into the cache (`build --in-place`)
    bool in_place = false;
    /// umask: the file mode creation mask `build` creates entries with, as
    /// octal digits ("002": group members may write, for a cache shared by a
    /// group whose root has the setgid bit); unset: the process's own
    std::optional<unsigned> umask;
    /// in-place-modules: more Python files that in-place builds compile (with
    /// the modules they import), beyond the kernels' and `*<host-suffix>.py`
    std::vector<std::filesystem::path> in_place_modules;
    /// template-args: the C++ template arguments of template `__global__`
    /// entries, as cunumpy's `template_args` gives them, by kernel name (or
    /// dotted module name, which wins when both are set): `{ scale =
    /// ["double", "3"] }` builds, keys and launches `scale<double, 3>`.
    std::map<std::string, std::vector<std::string>> template_args;
    /// warnings-as-errors: `check-signatures` exits 1 on warnings too (a
    /// declaration cunumpy's own reader cannot read), as `--warnings-as-errors`
    bool warnings_as_errors = false;
    /// struct-headers: each committed struct header (absolute) and the
    /// Python callable that writes it, "module:function" (the function takes
    /// the path to write, as cunumpy's write_cuda_header). check-signatures
    /// and status regenerate each into a temporary file and compare; build
    /// and status lay out the structs they define to check every cubin's
    /// parameters.
    std::map<std::filesystem::path, std::string> struct_headers;
    /// not-kernels: folders (absolute, lexically normal) declared not to be
    /// kernels, though they hold a `<name><host-suffix>.py`: a walk leaves
    /// them out without a warning, and warns when one defines `<name>` after
    /// all (a kernel then, as cunumpy takes it).
    std::vector<std::filesystem::path> not_kernels;
    /// struct-header-timeout: seconds one struct header's writer may run
    /// before check-signatures and status stop it and report it by name
    int struct_header_timeout = 60;

    /// The pyproject.toml the values came from; empty when none was found.
    std::filesystem::path source_file;
};

/// Finds the pyproject.toml nearest to `start` (in its folder or an ancestor,
/// as pip and pre-commit do) and returns the defaults overridden by its
/// `[tool.cunumpy-kernels]` table. Relative paths in the table are resolved
/// against the file's folder. No file, or one without the table: the defaults.
///
/// Throws ConfigError naming the file and key for an unknown key, a value of the
/// wrong type, an unknown architecture or compiler name, and for TOML syntax
/// errors (with line and column).
CK_API Config load_config(const std::filesystem::path& start);

/// Parses `[tool.cunumpy-kernels]` of one pyproject.toml, as load_config does.
CK_API Config load_config_file(const std::filesystem::path& pyproject);

/// Checks `arch` is `sm_<digits>` or `compute_<digits>`; throws UsageError
/// naming `where` (a flag or file:key) otherwise.
CK_API void validate_architecture(const std::string& arch, const std::string& where);

/// Checks a PyccelCache name can be a folder name: not empty, no `/`, no
/// leading dot. Throws UsageError naming `where` otherwise.
CK_API void validate_cache_name(const std::string& name, const std::string& where);

/// Parses "nvrtc" or "nvcc"; throws UsageError naming `where` otherwise.
CK_API CudaCompilerKind parse_compiler_kind(const std::string& name, const std::string& where);

/// Checks extra compiler options (`--compiler-option`, the `options` key) and
/// returns them with the folder of every include option (`-I`, `-isystem`,
/// `--include-path`, ...) made absolute against `base`: the working folder for
/// flags, pyproject.toml's folder for the key. Throws UsageError naming
/// `where` for an option that sets the target or output kind (`-arch`,
/// `-gencode`, `-rdc`, `-G`, `-ptx`, `-o`, ...: the message names `--arch` or
/// the config key to use instead) and for an option missing its value.
CK_API std::vector<std::string> resolve_compiler_options(const std::vector<std::string>& options,
                                                         const std::filesystem::path& base, const std::string& where);

/// "nvrtc" or "nvcc".
CK_API std::string to_string(CudaCompilerKind kind);

/// Checks `language` is one Pyccel compiles host kernels to, "c" or
/// "fortran"; throws UsageError naming `where` otherwise.
CK_API void validate_language(const std::string& language, const std::string& where);

}  // namespace ck
