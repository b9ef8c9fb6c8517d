// Finding a kernel's CUDA artifact for a device in the cache `build` fills,
// verifying it, and building it with NVRTC on a miss. Pure CPU work: loading
// the bytes into the driver is the caller's (cuda_kernel.cpp).
//
// Keys are computed by CudaPlanner exactly as `build` computes them; the
// runtime starts no process (the cunumpy header folder and the compiler
// identities come from the probe records `build` left in the cache).
#pragma once

#include "cache/cache.hpp"
#include "cache/key_record.hpp"
#include "source/source_record.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"

#include "cuda_job/cuda_job.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "runtime/image_source.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ck {

class CudaCompiler;
class CudaPlanner;
class ToolProbe;

/// A target that may serve a device, and how it would be loaded.
struct ServingTarget {
    std::string target;  ///< sm_90, compute_90, ...
    const char* how;     ///< "cubin", "compatible cubin" or "ptx" (rank_targets)
};

/// How first calls use the key record (CUNUMPY_KERNELS_KEY_RECORD): "on"
/// (the default) takes kept keys and keeps planned ones; "off" plans every
/// time and keeps nothing; "check" plans behind every kept key too and throws
/// ArtifactError when the two differ (for tests of the record itself).
enum class KeyRecordMode { on, off, check };

/// A cache entry that may fit the device.
struct ArtifactCandidate {
    Manifest manifest;
    std::filesystem::path entry;  ///< its folder
    std::string how;              ///< "cubin", "compatible cubin" or "ptx"
    std::filesystem::path root;   ///< the cache root it is in: who may write is checked from there down
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
    ArtifactCache(Config config, const std::string& cache_name, bool read_only, WarningSink warn);
    ~ArtifactCache();

    const std::filesystem::path& root() const { return location_.root; }

    /// How many keys find() took from the key record, not planned (for
    /// tests and benchmarks).
    std::size_t keys_from_record() const;
    /// How many entries' manifests were taken from the key record rather
    /// than read (their files' stats unchanged since it was kept).
    std::size_t manifests_from_record() const { return manifests_from_record_; }

    /// Project headers lexed already, by their text: shared by the catalog's
    /// declaration readings and the first calls' planning (LexedTexts).
    signatures::LexedTexts& lexed() { return lexed_; }

    /// Declaration readings of this process: the catalog's, taken again by
    /// the first calls' planning while source and headers are unchanged.
    signatures::DeclarationMemo& declarations() { return declarations_; }

    /// The targets whose entries may serve a device of compute capability
    /// `cc_major`.`cc_minor`, best first (rank_targets): the cubin of its
    /// architecture, compatible cubins (same major, lower minor), then PTX
    /// not newer than the device. Every target that could serve is listed,
    /// whatever the config's `arch` names, so a cache built with other
    /// `--arch` flags is found too.
    std::vector<ServingTarget> serving(int cc_major, int cc_minor) const;

    /// The entry of `kernel` for `target` under the current inputs, or
    /// nullopt when the cache holds none. Keys are computed when first asked
    /// (the kernel's source, includes and entry are read once per cache, a
    /// target's key once), so a device served by its first target costs one
    /// key and one lookup. Throws ArtifactError naming the target when the
    /// entry held is unusable (its manifest does not parse, an artifact is
    /// missing or truncated), SourceError as CudaPlanner::read_kernel,
    /// UsageError when the config's compiler options cannot be parsed.
    std::optional<ArtifactCandidate> find(const KernelSource& kernel, const ServingTarget& target);

    /// Lines for the error when nothing fits: the entries the cache holds
    /// for `kernel` from other inputs, or that it holds none.
    std::vector<std::string> held(const KernelSource& kernel) const;

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
    const CudaJob& job_for(const KernelSource& kernel, const std::string& target);
    /// The entry of `job`, as find; `read` receives the manifest's reading when
    /// its file was read (for the key record).
    std::optional<ArtifactCandidate> lookup(const CudaJob& job, std::string& problem,
                                            std::optional<ManifestReading>& read) const;
    /// Writes what job_for left for the key record once lookup, started at
    /// `looked_up_at`, has read the entry: a planned key with the reading of
    /// its entry's manifest, or that reading for a kept key that had none.
    void write_key_record(const CudaJob& job, const ManifestReading* manifest,
                          std::chrono::system_clock::time_point looked_up_at);
    CudaJob nvrtc_job(const KernelSource& kernel, const std::string& target);
    std::optional<ModuleImage> published_image(const CudaJob& job) const;
    /// Throws ArtifactError when the entry, its files or a folder above it
    /// can be written by others (other_writable_problem).
    void check_write_access(const std::filesystem::path& root, const std::filesystem::path& entry,
                            const std::string& artifact) const;
    /// The stores entries are looked up in: the root's, then the unwritable
    /// preferred root's when the root is the fallback.
    std::vector<const EntryStore*> stores() const;
    bool publish(const CudaJob& job, const CudaCompileOutput& output, double seconds, std::filesystem::path& artifact);

    Config config_;
    CacheLocation location_;
    EntryStore store_;
    std::optional<EntryStore> also_read_;  ///< the unwritable preferred root, when the root is the fallback
    /// Keys planned by earlier processes, with what their planning read
    /// (cache/key_record.hpp): a first call whose files are unchanged takes
    /// its key after a stat of each. The root's, kept in, and the unwritable
    /// preferred root's when the root is the fallback.
    /// The cache's own folders above its entries (root, kind, shard) and its
    /// key records found not writable by others, checked once for the life
    /// of this object; an entry's folder and files are checked at every read.
    mutable ClearedFolders cleared_folders_;
    KeyRecord key_record_;
    KeyRecordMode key_record_mode_;  ///< CUNUMPY_KERNELS_KEY_RECORD
    std::optional<KeyRecord> also_read_keys_;
    std::unique_ptr<ToolProbe> probe_;
    std::unique_ptr<CudaCompiler> nvrtc_;
    bool read_only_;
    mutable std::atomic<std::uint64_t> load_hits_{0};  ///< added to the cache's statistics when this object goes
    std::atomic<std::uint64_t> load_misses_{0};
    WarningSink warn_;
    bool identity_known_ = true;  ///< false: keys are matched against latest records minus the compiler
    mutable std::mutex mutex_;    ///< guards the planners and the jobs (CudaPlanner is not thread-safe)
    std::string identity_;        ///< of the configured compiler; "" when unknown
    CompilerFacts facts_;         ///< of the configured compiler; empty when it is not installed
    struct ReadKernel {
        std::unique_ptr<CudaPlanner> planner;  ///< the one that read it, for the jobs of its targets
        std::optional<PlannedKernel> planned;  ///< none while every key asked came from the key record
        std::chrono::system_clock::time_point planned_at;  ///< when its reading started
        std::optional<util::FileStat> source_seen;         ///< the source's stat just before it was read
    };
    /// The key kept for `question` in the root's key record or the preferred root's.
    std::optional<KeptKey> kept_key(const std::string& question) const;
    const ManifestReading* kept_manifest(const std::string& key) const;
    /// What the key record is to be given once a job's entry has been looked up.
    struct KeyToKeep {
        std::string question;
        /// A planned key's witnesses; none for a key the record gave
        /// without a manifest's reading (only the reading is added).
        std::optional<KeyWitnesses> witnesses;
        std::chrono::system_clock::time_point planned_at;
    };
    /// This process's record of headers' digests and include directives,
    /// never saved: the kernels of one tree include the same headers, and
    /// each first call's include scan lexed them again. Trusted as any
    /// record (a file's stat, a 2 s margin), so an edit between two first
    /// calls is seen.
    SourceRecord includes_record_{std::nullopt};
    /// Every header and kernel source the catalog's readings and the first
    /// calls' include scans lexed, kept for the life of this object (a
    /// Struphy tree's are about 1 MB of text).
    signatures::LexedTexts lexed_;
    signatures::DeclarationMemo declarations_{[this](const std::string& path) { return includes_record_.digest(path); }};
    std::map<std::string, ReadKernel> read_kernels_;          ///< by module and source
    std::map<std::string, CudaJob> jobs_;                     ///< by module, source and target
    std::map<std::string, KeyToKeep> keys_to_keep_;           ///< by module, source and target
    /// By key: the manifests' readings the key record kept with its keys.
    /// Never erased, so a pointer to one stays valid without the lock.
    std::map<std::string, ManifestReading> kept_manifests_;
    std::map<std::string, CudaJob> nvrtc_plans_;              ///< by module@target
    std::size_t keys_from_record_ = 0;
    mutable std::atomic<std::size_t> manifests_from_record_{0};
    std::mutex build_mutex_;      ///< one NVRTC build of a kernel at a time
};

}  // namespace ck
