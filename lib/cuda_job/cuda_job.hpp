// One CUDA job: a kernel's source compiled for one target. Its key covers
// everything that can change the artifact; its output is checked and published
// as one cache entry (cuda_commit.hpp). Shared by `build` (lib/builder/cuda_build.hpp runs and
// publishes jobs) and the runtime's NVRTC build on a miss.
#pragma once

#include "cache/cache.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"

#include "compilers/cuda_compiler.hpp"
#include "source/include_scanner.hpp"
#include "signatures/kernel_entry.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// Bumped whenever the artifacts' layout or the meaning of an input changes.
inline constexpr const char* cuda_key_format = "cunumpy-kernels/cuda/2";

/// The targets a config asks for: each `arch`, plus `compute_<newest>` for PTX
/// when `ptx` is set. Order kept, duplicates dropped.
std::vector<std::string> cuda_targets(const Config& config);

/// Everything a CUDA job needs, computed before any compile starts.
struct CudaJob {
    const KernelSource* kernel = nullptr;
    KernelEntry entry;  ///< the function compiled: `<name>` or a template's instantiation
    std::string target;
    std::string source;                                      ///< the text hashed into the key
    std::vector<std::filesystem::path> include_dirs;         ///< `-I`, in the scanner's order
    std::vector<std::filesystem::path> system_include_dirs;  ///< `-isystem`, in order
    std::vector<std::filesystem::path> pre_includes;         ///< forced includes, as the compiler gets them
    std::vector<std::string> options;                        ///< keyed options, as the compiler gets them
    std::map<std::filesystem::path, std::string> headers;    ///< canonical path -> key name, for nvcc's check
    nlohmann::json inputs;
    std::string key;

    /// The artifact's file name in the entry: `<kernel>.<target>.cubin|ptx`.
    std::string artifact_file() const;
};

/// The key inputs of `kernel` for `target` (see cache.hpp: no paths, no
/// times): source, headers, names searched and not found, forced includes,
/// compiler, target, keyed `options`, the compiler's `environment`, and the
/// entry's template arguments (`template_args`, only for a template, so
/// that the keys of plain entries stay what they were).
nlohmann::json cuda_key_inputs(const KernelSource& kernel, const std::string& source_sha256, const IncludeScan& scan,
                               const std::string& compiler_identity, const std::string& target,
                               const std::vector<std::string>& options, const CompilerEnvironment& environment = {},
                               const KernelEntry& entry = {});

/// The CudaCompileRequest of `job`.
CudaCompileRequest compile_request(const CudaJob& job);

/// The first field of a CUDA entry's manifest that contradicts its key's
/// inputs (which name the kernel and the target): the kernel, the target, an
/// artifact's target, or an entry symbol that is not the kernel's (see
/// is_entry_of). Empty when they agree. What the manifest says beside its
/// inputs is not in the key, so an entry copied or edited by hand is read
/// against them before it is trusted (`cache verify`, `export`, `import`).
std::string manifest_identity_problem(const Manifest& manifest);

/// Throws ArtifactCheckError when `output`'s artifact could not be loaded
/// for `job`'s target or lacks the kernel's entry (see artifact_check.hpp).
void check_cuda_output(const CudaJob& job, const CudaCompileOutput& output);

}  // namespace ck
