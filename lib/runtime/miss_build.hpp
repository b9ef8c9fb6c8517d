// The build on a miss: when no entry in the cache fits the device, the
// runtime compiles the kernel for the device's own architecture and
// publishes the entry `build` would make (cuda_job/cuda_commit.hpp), so the
// next process hits. The compiler is given, not made here: the runtime
// passes NVRTC, unit tests a fake that needs no toolkit.
#pragma once

#include "cache/cache.hpp"
#include "cuda_job/cuda_job.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"
#include "runtime/image_source.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace ck {

class CudaCompiler;
class EntryLookup;
class ToolProbe;

/// Builds kernels of one cache that no entry serves. Thread-safe.
class MissBuild {
public:
    /// Plans with `config` and `compiler` as `build --compiler nvrtc` would,
    /// and publishes into `entries`' writable store, the root of `location`
    /// (unless `read_only`). `warn` hears why a build stays in memory.
    /// `probe`, `compiler` and `entries` must outlive this object.
    MissBuild(Config config, const CacheLocation& location, const ToolProbe& probe, const CudaCompiler& compiler,
              const EntryLookup& entries, bool read_only, WarningSink warn);

    /// Compiles `kernel` for `sm_<cc>` and publishes the entry, unless the
    /// cache is read-only or cannot be written (then the image stays in
    /// memory and `info.published` is false). Holds the entry's build lock
    /// (build_lock.hpp) while compiling: processes that miss the same key
    /// together compile it once; the others wait and read the published
    /// entry, as does a call that finds it published meanwhile.
    /// Throws ArtifactError with the compiler's log when the source does not
    /// compile, ArtifactCheckError (nothing published) when the artifact
    /// fails a check of artifact_check.hpp, ToolchainError when the compiler
    /// cannot be loaded, SourceError and UsageError as planning does.
    ModuleImage build(const KernelSource& kernel, int cc_major, int cc_minor);

    /// How many images build() compiled (the cache's load misses).
    std::uint64_t compiled() const { return compiled_; }

private:
    CudaJob job_of(const KernelSource& kernel, const std::string& target);
    std::optional<ModuleImage> published_image(const CudaJob& job) const;
    ModuleImage compile(const CudaJob& job);
    /// Publishes `output` as `job`'s entry; false (with a warning) when the
    /// cache is read-only or cannot be written. `artifact` receives the
    /// published artifact's path.
    bool publish(const CudaJob& job, const CudaCompileOutput& output, double seconds, std::filesystem::path& artifact);

    Config config_;
    const CacheLocation& location_;
    const ToolProbe& probe_;
    const CudaCompiler& compiler_;
    const EntryLookup& entries_;
    bool read_only_;
    WarningSink warn_;
    std::mutex plans_mutex_;                ///< guards plans_
    std::map<std::string, CudaJob> plans_;  ///< by module@target
    std::mutex build_mutex_;                ///< one build of a kernel at a time
    std::atomic<std::uint64_t> compiled_{0};
};

}  // namespace ck
