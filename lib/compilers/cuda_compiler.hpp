// The interface of the CUDA compilers (NVRTC in-process, nvcc as a process).
#pragma once

#include "compilers/compiler_environment.hpp"
#include "cunumpy_kernels/config.hpp"

#include <filesystem>
#include <map>
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
    std::vector<std::string> options;   ///< the keyed user options, passed as given
    std::vector<std::filesystem::path>
        include_dirs;  ///< `-I` in order; their effect is in the key through the headers found
    std::vector<std::filesystem::path>
        system_include_dirs;  ///< `-isystem` in order, searched after the toolkit's include folder
    std::vector<std::filesystem::path> pre_includes;  ///< forced includes: the files found, or names of toolkit headers
    /// The key's headers and forced includes: path as found -> key name. nvcc
    /// checks every file it reads (but the source and the toolkit's) is one,
    /// comparing canonical paths.
    std::map<std::filesystem::path, std::string> headers;
    /// The name expression to compile and look up: empty or `kernel` for a
    /// plain entry, `kernel<args>` for a template's instantiation (NVRTC
    /// lowers it; nvcc instantiates it and finds its mangled symbol).
    std::string entry;

    /// `entry`, or `kernel` when it is empty.
    const std::string& entry_expression() const { return entry.empty() ? kernel : entry; }
};

/// Seconds a compile spent in each of its phases: "preprocess" (nvcc's
/// host-compiler `-E` of the source), "front_end" (the C++ front end and
/// optimizer that make PTX: NVRTC, or nvcc's cicc) and "ptxas" (PTX to
/// cubin). A phase one run shares between targets (the compute_90 front end
/// behind both the PTX and the sm_90 cubin) is counted for each of them.
using CompilePhases = std::map<std::string, double>;

struct CudaCompileOutput {
    bool ok = false;
    std::string artifact;      ///< cubin or PTX bytes
    std::string entry_symbol;  ///< the entry's (lowered) name in the artifact
    std::string log;           ///< diagnostics, `file:line:` form
    /// Key names of the files the compiler reports it read, besides the source
    /// and the toolkit (nvcc only; empty for NVRTC, which reports none).
    std::vector<std::string> dependencies;
    CompilePhases phases;  ///< where the time went, when the compiler tells
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
    /// The host compiler that takes part in compiling device code, as a key
    /// input: "" when none does (NVRTC). nvcc preprocesses the source with
    /// `gcc -E` and hands gcc's version to cicc (`nvcc -dryrun`), so another
    /// gcc can make another cubin. `ccbin` is the `-ccbin`/`--compiler-bindir`
    /// of the options, if any. Answered from the probe cache while the host
    /// compiler's file is unchanged; with `may_start` false only from there
    /// (nothing when there is no record). Throws ToolchainError when the host
    /// compiler must be started and fails.
    virtual std::optional<std::string> host_compiler_identity(const std::optional<std::string>& ccbin,
                                                              bool may_start) const
    {
        (void)ccbin;
        (void)may_start;
        return std::string();
    }
    /// The toolkit's header folders, searched last: `<toolkit>/include`, then
    /// `<toolkit>/include/cccl`. A header the kernel names from there is a
    /// key input ("<cuda>/name"); what it includes in turn is not followed.
    virtual std::vector<std::filesystem::path> toolkit_include_dirs() const = 0;
    /// The environment variables the compiler reads and what the key does with them.
    virtual const CompilerEnvironment& environment() const = 0;
    /// Compiles; a rejected source is `ok == false` with the log. Thread-safe.
    /// Throws ToolchainError when the compiler cannot be loaded or started.
    virtual CudaCompileOutput compile(const CudaCompileRequest& request) const = 0;
    /// Splits `targets` (one kernel's, all compiled from `request`) into the
    /// groups compile_targets() compiles together, because one run does work
    /// they share: one front end per virtual architecture, one nvcc process.
    /// Every target is in exactly one group; order is kept. Default: each
    /// target alone.
    virtual std::vector<std::vector<std::string>> target_groups(const CudaCompileRequest& request,
                                                                const std::vector<std::string>& targets) const;
    /// Compiles `request` for each of `targets` (its own `target` is not
    /// read) and returns one output per target, in order; a rejected source
    /// fails each. Default: compile() once per target. Thread-safe. Throws
    /// ToolchainError when the compiler cannot be loaded or started.
    virtual std::vector<CudaCompileOutput> compile_targets(const CudaCompileRequest& request,
                                                           const std::vector<std::string>& targets) const;
};

/// A CUDA toolkit folder and what chose it.
struct CudaToolkit {
    std::filesystem::path root;
    std::string found_by;  ///< "cuda-root", "$CUDA_PATH", "$CUDA_HOME", "nvcc in PATH (/x/bin/nvcc)", "the default"
};

/// The toolkit as CuPy (and so cunumpy's ranks) finds it: `config.cuda_root`,
/// else $CUDA_PATH, $CUDA_HOME (as given); else the toolkit of the nvcc in
/// PATH, links resolved: the toolkit a wrapper script there execs, else the
/// folder above it when its include/ holds cuda_runtime_api.h; else
/// /usr/local/cuda, links resolved. Throws ToolchainError, naming CUDA_HOME,
/// when the nvcc in PATH lies in no toolkit and its toolkit cannot be known.
CudaToolkit find_cuda_toolkit(const Config& config);

/// find_cuda_toolkit(config).root.
std::filesystem::path cuda_root_of(const Config& config);

/// The compiler `config.compiler` selects. Throws ToolchainError when it cannot
/// be found.
std::unique_ptr<CudaCompiler> make_cuda_compiler(const Config& config, const ToolProbe& probe);

/// Rewrites the `file(line): ` that NVRTC and nvcc print into the `file:line: `
/// form editors and CI annotations read; everything else is kept.
std::string to_file_line_diagnostics(const std::string& log);

/// The virtual architecture a target's code is made from: `compute_90` for
/// `sm_90` and `compute_90`, `compute_90a` for `sm_90a` (nvcc's
/// `-gencode arch=compute_90a,code=sm_90a`).
std::string virtual_architecture(const std::string& target);

/// "cubin" for `sm_XX`, "ptx" for `compute_XX`.
std::string artifact_extension(const std::string& target);

}  // namespace ck
