// Finding a kernel's CUDA artifact for a device in the cache `build` fills,
// verifying it, and building it on a miss. Pure CPU work: loading the bytes
// into the driver is the caller's (cuda_kernel.cpp).
//
// A thin front over three pieces: the kernel's key (kernel_keys.hpp), the
// verified entry that serves it (entry_lookup.hpp), and the build on a miss
// (miss_build.hpp), which compiles with the compiler it is given.
#pragma once

#include "cache/cache.hpp"
#include "cache/write_access.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"
#include "runtime/entry_lookup.hpp"
#include "runtime/image_source.hpp"
#include "runtime/kernel_keys.hpp"
#include "runtime/miss_build.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ck {

class CudaCompiler;
class ToolProbe;

/// A target that may serve a device, and how it would be loaded.
struct ServingTarget {
    std::string target;  ///< sm_90, compute_90, ...
    const char* how;     ///< "cubin", "compatible cubin" or "ptx" (rank_targets)
};

/// The cache of one cache name, shared by the kernels that use it. Thread-safe.
class ArtifactCache {
public:
    /// Throws UsageError for a CUNUMPY_KERNELS_KEY_RECORD other than on, off
    /// or check. `config` is the tree's; `cache_name` the PyccelCache name (config's
    /// cache-name, else the kernels' top-level package). The root is the one
    /// `build` writes (planned_cache_location): the preferred root, or, when
    /// that cannot be written and `<tmp>/<name>-kernels` can, that fallback,
    /// as cunumpy's PyccelCache reads and writes it; entries already in the
    /// unwritable preferred root are found too, as `build` finds them.
    /// `miss_compiler` builds on a miss and, when the config compiles with
    /// NVRTC, names the keys' compiler; null: NVRTC of the config's toolkit
    /// (loaded when first used). Tests pass a fake.
    ArtifactCache(Config config, const std::string& cache_name, bool read_only, WarningSink warn,
                  std::unique_ptr<CudaCompiler> miss_compiler = nullptr);
    ~ArtifactCache();

    const std::filesystem::path& root() const { return location_.root; }

    /// How many keys find() took from the key record, not planned (for
    /// tests and benchmarks).
    std::size_t keys_from_record() const { return keys_.keys_from_record(); }
    /// How many entries' manifests were taken from the key record rather
    /// than read (their files' stats unchanged since it was kept).
    std::size_t manifests_from_record() const { return entries_.manifests_from_record(); }

    /// Project headers lexed already, by their text: shared by the catalog's
    /// declaration readings and the first calls' planning (LexedTexts).
    signatures::LexedTexts& lexed() { return keys_.lexed(); }

    /// Declaration readings of this process: the catalog's, taken again by
    /// the first calls' planning while source and headers are unchanged.
    signatures::DeclarationMemo& declarations() { return keys_.declarations(); }

    /// The targets whose entries may serve a device of compute capability
    /// `cc_major`.`cc_minor`, best first (rank_targets): the cubin of its
    /// architecture, compatible cubins (same major, lower minor), then PTX
    /// not newer than the device. Every target that could serve is listed,
    /// whatever the config's `arch` names, so a cache built with other
    /// `--arch` flags is found too.
    std::vector<ServingTarget> serving(int cc_major, int cc_minor) const;

    /// The entry of `kernel` for `target` under the current inputs, or
    /// nullopt when the cache holds none. Keys are computed when first asked
    /// (KernelKeys::job), so a device served by its first target costs one
    /// key and one lookup. Throws ArtifactError naming the target when the
    /// entry held is unusable (its manifest does not parse, an artifact is
    /// missing or truncated), SourceError as CudaPlanner::read_kernel,
    /// UsageError when the config's compiler options cannot be parsed.
    std::optional<ArtifactCandidate> find(const KernelSource& kernel, const ServingTarget& target);

    /// Lines for the error when nothing fits: the entries the cache holds
    /// for `kernel` from other inputs, or that it holds none.
    std::vector<std::string> held(const KernelSource& kernel) const { return entries_.held(kernel); }

    /// The candidate's bytes after checking size and SHA-256 against the
    /// manifest. Throws ArtifactError when they differ (never loaded).
    ModuleImage read(const ArtifactCandidate& candidate) const { return entries_.read(candidate); }

    /// MissBuild::build: compiles the kernel for `sm_<cc>` and publishes the
    /// entry unless the cache is read-only (then the image stays in memory).
    ModuleImage build(const KernelSource& kernel, int cc_major, int cc_minor)
    {
        return miss_build_.build(kernel, cc_major, cc_minor);
    }

private:
    Config config_;
    CacheLocation location_;
    bool read_only_;
    std::unique_ptr<ToolProbe> probe_;
    std::unique_ptr<CudaCompiler> miss_compiler_;
    /// Folders found not writable by others, shared by the key record and
    /// the entries' reader: each is checked once for the life of this object.
    ClearedFolders cleared_folders_;
    KernelKeys keys_;
    EntryLookup entries_;
    MissBuild miss_build_;
};

}  // namespace ck
