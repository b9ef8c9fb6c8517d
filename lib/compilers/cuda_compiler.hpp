// The interface of the CUDA compilers (NVRTC in-process, nvcc as a process).
#pragma once

#include "cunumpy_kernels/config.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ck {

class ToolProbe;

/// One compilation: one source, one entry, one target.
struct CudaCompileRequest {
    std::filesystem::path source_file;  ///< shown in diagnostics
    std::string source;                 ///< the text that was hashed into the key
    std::string kernel;                 ///< entry function, `__global__ void <kernel>(...)`
    std::string target;                 ///< `sm_90` gives a cubin, `compute_90` PTX
    std::vector<std::string> options;   ///< user options, part of the key
    std::vector<std::filesystem::path> include_dirs;  ///< `-I` in order; not part of the key
};

struct CudaCompileOutput {
    bool ok = false;
    std::string artifact;      ///< cubin or PTX bytes
    std::string entry_symbol;  ///< the entry's (lowered) name in the artifact
    std::string log;           ///< diagnostics, `file:line:` form
};

class CudaCompiler {
public:
    virtual ~CudaCompiler() = default;
    /// Name and exact version, part of every key ("nvrtc 13.0 (libnvrtc.so.13, N bytes)").
    /// Cheap: answered from the probe cache when the compiler's file is unchanged.
    virtual std::string identity() const = 0;
    /// identity() as an earlier run recorded it in the probe cache, without
    /// loading or starting the compiler; nothing when no record exists.
    /// `status` plans with it: it starts no compiler.
    virtual std::optional<std::string> remembered_identity() const { return std::nullopt; }
    /// Compiles; a rejected source is `ok == false` with the log. Thread-safe.
    /// Throws ToolchainError when the compiler cannot be loaded or started.
    virtual CudaCompileOutput compile(const CudaCompileRequest& request) const = 0;
};

/// The toolkit folder: `config.cuda_root`, else $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
std::filesystem::path cuda_root_of(const Config& config);

/// The compiler `config.compiler` selects. Throws ToolchainError when it cannot
/// be found.
std::unique_ptr<CudaCompiler> make_cuda_compiler(const Config& config, const ToolProbe& probe);

/// Rewrites the `file(line): ` that NVRTC and nvcc print into the `file:line: `
/// form editors and CI annotations read; everything else is kept.
std::string to_file_line_diagnostics(const std::string& log);

/// "cubin" for `sm_XX`, "ptx" for `compute_XX`.
std::string artifact_extension(const std::string& target);

}  // namespace ck
