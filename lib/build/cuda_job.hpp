// One CUDA job: a kernel's source compiled for one target. Planning computes
// its key from everything that can change the artifact; running compiles and
// publishes it.
#pragma once

#include "cunumpy_kernels/build.hpp"
#include "cunumpy_kernels/cache.hpp"

#include "compilers/cuda_compiler.hpp"
#include "compilers/include_scanner.hpp"

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
    std::string target;
    std::string source;                          ///< the text hashed into the key
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
/// compiler, target, keyed `options`, and the compiler's `environment`.
nlohmann::json cuda_key_inputs(const KernelSource& kernel, const std::string& source_sha256, const IncludeScan& scan,
                               const std::string& compiler_identity, const std::string& target,
                               const std::vector<std::string>& options, const CompilerEnvironment& environment = {});

/// The CudaCompileRequest of `job`.
CudaCompileRequest compile_request(const CudaJob& job);

/// A CUDA job compiled and checked, not published yet.
struct CompiledCudaJob {
    const CudaJob* job = nullptr;
    JobResult result;          ///< failed (the log says why), or built once published
    CudaCompileOutput output;  ///< the artifact and the compiler's log
    std::string failure;       ///< why it failed, in a few words ("check 'architecture' failed"); "" when not
};

/// Throws ArtifactCheckError when `output`'s artifact could not be loaded
/// for `job`'s target or lacks the kernel's entry (see artifact_check.hpp).
void check_cuda_output(const CudaJob& job, const CudaCompileOutput& output);

/// Compiles `job` and checks the artifact. A compile error, a failed check or
/// a toolchain error is a failed result with the log, never an exception.
CompiledCudaJob compile_cuda_job(const CudaJob& job, const CudaCompiler& compiler);

/// Publishes the compiled targets of one kernel in `store`, all or none: when
/// any failed, no entry is published and the others fail too, their log
/// naming the target that failed. Entries published earlier are untouched.
/// Records the latest entries, or the failures, for `status`. Returns one
/// result per target, in order.
std::vector<JobResult> publish_cuda_kernel(std::vector<CompiledCudaJob> targets, const EntryStore& store);

/// Writes `job`'s artifact from `output` into `writer` and returns the
/// entry's manifest, for `writer.commit`. Throws CacheError on I/O failure.
Manifest stage_cuda_entry(EntryWriter& writer, const CudaJob& job, const CudaCompileOutput& output, double seconds);

/// The JobResult of a job found in the cache.
JobResult hit_result(const CudaJob& job, const EntryStore& store);

}  // namespace ck
