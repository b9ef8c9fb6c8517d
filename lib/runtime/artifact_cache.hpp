// Finding a kernel's CUDA artifact for a device in the cache `build` fills,
// verifying it, and building it with NVRTC on a miss. Pure CPU work: loading
// the bytes into the driver is the caller's (cuda_kernel.cpp).
//
// Keys are computed by CudaPlanner exactly as `build` computes them; the
// runtime starts no process (the cunumpy header folder and the compiler
// identities come from the probe records `build` left in the cache).
#pragma once

#include "cache/cache.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"

#include "plan/cuda_job.hpp"
#include "plan/cuda_planner.hpp"
#include "runtime/image_source.hpp"

#include <map>
#include <memory>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace ck {

class CudaCompiler;
class CudaPlanner;
class ToolProbe;

/// A cache entry that may fit the device.
struct ArtifactCandidate {
    Manifest manifest;
    std::filesystem::path entry;  ///< its folder
    std::string how;              ///< "cubin", "compatible cubin" or "ptx"
};

/// The cache of one cache name, shared by the kernels that use it. Thread-safe.
class ArtifactCache {
public:
    /// `config` is the tree's; `cache_name` the PyccelCache name (config's
    /// cache-name, else the kernels' top-level package).
    ArtifactCache(Config config, const std::string& cache_name, bool read_only, WarningSink warn);
    ~ArtifactCache();

    const std::filesystem::path& root() const { return location_.root; }

    /// The entries that may serve a device of compute capability
    /// `cc_major`.`cc_minor`, best first: the cubin of its architecture, a
    /// compatible cubin (same major, lower minor), then the newest PTX not
    /// newer than the device. Every target that could serve is looked up,
    /// whatever the config's `arch` names, so a cache built with other
    /// `--arch` flags is found too. `report` gets lines for the error when
    /// nothing fits: the targets without entry, unusable entries, and the
    /// entries the cache holds for the kernel from other inputs.
    std::vector<ArtifactCandidate> candidates(const KernelSource& kernel, int cc_major, int cc_minor,
                                              std::vector<std::string>& report);

    /// The candidate's bytes after checking size and SHA-256 against the
    /// manifest. Throws ArtifactError when they differ (never loaded).
    ModuleImage read(const ArtifactCandidate& candidate) const;

    /// Compiles the kernel for `sm_<cc>` with NVRTC and publishes the entry,
    /// unless the cache is read-only (then the image stays in memory). Holds
    /// the entry's build lock (build_lock.hpp) while compiling: processes
    /// that miss the same key together compile it once, the others wait and
    /// read the published entry.
    /// Throws ArtifactError with the compiler's log when the source does not
    /// compile, ArtifactCheckError (nothing published) when the artifact
    /// fails a check of artifact_check.hpp, ToolchainError when NVRTC cannot
    /// be loaded.
    ModuleImage build(const KernelSource& kernel, int cc_major, int cc_minor);

private:
    struct Plans;
    const std::vector<CudaJob>& jobs_of(const KernelSource& kernel, int cc_major, int cc_minor);
    std::optional<ArtifactCandidate> lookup(const CudaJob& job, std::string& problem) const;
    std::vector<std::string> held(const KernelSource& kernel) const;
    CudaJob nvrtc_job(const KernelSource& kernel, const std::string& target);
    std::optional<ModuleImage> published_image(const CudaJob& job) const;
    bool publish(const CudaJob& job, const CudaCompileOutput& output, double seconds, std::filesystem::path& artifact);

    Config config_;
    CacheLocation location_;
    EntryStore store_;
    std::unique_ptr<ToolProbe> probe_;
    std::unique_ptr<CudaCompiler> nvrtc_;
    bool read_only_;
    mutable std::atomic<std::uint64_t> load_hits_{0};  ///< added to the cache's statistics when this object goes
    std::atomic<std::uint64_t> load_misses_{0};
    WarningSink warn_;
    bool identity_known_ = true;  ///< false: keys are matched against latest records minus the compiler
    std::mutex mutex_;            ///< guards the planners and the plans (CudaPlanner is not thread-safe)
    std::string identity_;        ///< of the configured compiler; "" when unknown
    CompilerFacts facts_;         ///< of the configured compiler; empty when it is not installed
    std::map<std::string, std::vector<CudaJob>> plans_;       ///< by module@cc
    std::map<std::string, CudaJob> nvrtc_plans_;              ///< by module@target
    std::mutex build_mutex_;      ///< one NVRTC build of a kernel at a time
};

}  // namespace ck
