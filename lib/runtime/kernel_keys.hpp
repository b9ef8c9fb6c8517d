// A kernel's cache key at the runtime's first call: planned exactly as
// `build` plans it (CudaPlanner), or taken from the key record that an
// earlier process kept (cache/key_record.hpp) while every file its planning
// looked at is unchanged. The runtime starts no process: cunumpy's header
// folder and the compiler's identity come from the probe records `build`
// left in the cache.
#pragma once

#include "cache/cache.hpp"
#include "cache/key_record.hpp"
#include "cache/write_access.hpp"
#include "cuda_job/cuda_job.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "source/source_record.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace ck {

class CudaCompiler;
class ToolProbe;

/// How first calls use the key record (CUNUMPY_KERNELS_KEY_RECORD): "on"
/// (the default) takes kept keys and keeps planned ones; "off" plans every
/// time and keeps nothing; "check" plans behind every kept key too and throws
/// ArtifactError when the two differ (for tests of the record itself).
enum class KeyRecordMode { on, off, check };

/// The mode CUNUMPY_KERNELS_KEY_RECORD names; `on` when it is unset or
/// empty. Throws UsageError for any value but on, off and check.
KeyRecordMode key_record_mode_from_environment();

/// The compiler that keys name, as the runtime knows it without starting it.
struct KeyCompiler {
    std::string identity;  ///< "" when unknown: entries are then matched by their other inputs
    CompilerFacts facts;   ///< empty when the compiler is not installed
};

/// The compiler `config` selects, as keys see it: `nvrtc`'s identity and
/// facts when the config compiles with NVRTC; otherwise the nvcc identity
/// (with its host compiler) that `build` recorded in `probe`'s records, never
/// a process started. Never throws: what cannot be known is left empty.
KeyCompiler key_compiler(const Config& config, const ToolProbe& probe, const CudaCompiler& nvrtc);

/// The keys of the kernels of one cache, computed when first asked and kept
/// for the life of this object. Thread-safe.
class KernelKeys {
public:
    /// `location`'s root keeps the key record (and its preferred root's is
    /// read too when the root is the fallback); `cleared` is the memo of
    /// folders found not writable by others that the entries' reader keeps,
    /// and must outlive this object. A read-only cache keeps no key.
    /// `margin` replaces KeyRecord::racy_margin (tests).
    KernelKeys(Config config, KeyCompiler compiler, const ToolProbe& probe, const CacheLocation& location,
               KeyRecordMode mode, bool read_only, ClearedFolders* cleared,
               std::chrono::nanoseconds margin = KeyRecord::racy_margin);
    KernelKeys(const KernelKeys&) = delete;
    KernelKeys& operator=(const KernelKeys&) = delete;

    /// The job of `kernel` for `target` under the current inputs: its key
    /// from the key record when the mode allows and the record's witnesses
    /// hold (then only `kernel`, `target` and `key` are set), else planned
    /// (the kernel's source and includes read once, a target's key once).
    /// The reference stays valid for the life of this object. Throws
    /// SourceError as CudaPlanner::read_kernel, UsageError when the config's
    /// compiler options cannot be parsed, ArtifactError in "check" mode when
    /// the record's key differs from the planned one.
    const CudaJob& job(const KernelSource& kernel, const std::string& target);

    /// The manifest's reading the record kept beside `key`, or null. The
    /// pointer stays valid for the life of this object.
    const ManifestReading* kept_manifest(const std::string& key) const;

    /// Keeps what job() planned for `job` in the key record, now that the
    /// lookup started at `looked_up_at` has read its entry's manifest
    /// (`manifest`, null when it was not read): a planned key with its
    /// witnesses, or the reading for a kept key that had none. Once per job;
    /// best effort, never throws.
    void keep(const CudaJob& job, const ManifestReading* manifest, std::chrono::system_clock::time_point looked_up_at);

    /// Whether the compiler's identity is known: without it keys cannot be
    /// looked up, only the latest entries matched by their other inputs.
    bool identity_known() const { return !compiler_.identity.empty(); }
    KeyRecordMode mode() const { return mode_; }

    /// How many keys job() took from the key record, not planned.
    std::size_t keys_from_record() const;

    /// Project headers lexed already, by their text: shared by the catalog's
    /// declaration readings and the first calls' planning (LexedTexts).
    signatures::LexedTexts& lexed() { return lexed_; }

    /// Declaration readings of this process: the catalog's, taken again by
    /// the first calls' planning while source and headers are unchanged.
    signatures::DeclarationMemo& declarations() { return declarations_; }

private:
    /// A kernel's source as read once for the keys of all its targets.
    struct ReadKernel {
        std::unique_ptr<CudaPlanner> planner;              ///< the one that read it, for the jobs of its targets
        std::optional<PlannedKernel> planned;              ///< none while every key asked came from the key record
        std::chrono::system_clock::time_point planned_at;  ///< when its reading started
        std::optional<util::FileStat> source_seen;         ///< the source's stat just before it was read
    };
    /// What the key record is to be given once a job's entry has been looked up.
    struct KeyToKeep {
        std::string question;
        /// A planned key's witnesses; none for a key the record gave
        /// without a manifest's reading (only the reading is added).
        std::optional<KeyWitnesses> witnesses;
        std::chrono::system_clock::time_point planned_at;
    };

    ReadKernel& reading_of(const KernelSource& kernel);
    /// The key kept for `question` in the root's key record or the preferred root's.
    std::optional<KeptKey> kept_key(const std::string& question) const;
    const CudaJob& planned_job(const KernelSource& kernel, const std::string& target, ReadKernel& reading,
                               const std::string& question, const std::optional<KeptKey>& kept);

    Config config_;
    KeyCompiler compiler_;
    const ToolProbe& probe_;
    KeyRecordMode mode_;
    bool read_only_;
    /// Keys planned by earlier processes, with what their planning read: the
    /// root's, kept in, and the unwritable preferred root's when the root is
    /// the fallback.
    KeyRecord key_record_;
    std::optional<KeyRecord> also_read_keys_;
    mutable std::mutex mutex_;  ///< guards the planners and the jobs (CudaPlanner is not thread-safe)
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
    signatures::DeclarationMemo declarations_{
        [this](const std::string& path) { return includes_record_.digest(path); }};
    std::map<std::string, ReadKernel> read_kernels_;  ///< by module and source
    std::map<std::string, CudaJob> jobs_;             ///< by module, source and target
    std::map<std::string, KeyToKeep> keys_to_keep_;   ///< by module, source and target
    /// By key: the manifests' readings the key record kept with its keys.
    /// Never erased, so a pointer to one stays valid without the lock.
    std::map<std::string, ManifestReading> kept_manifests_;
    std::size_t keys_from_record_ = 0;
};

}  // namespace ck
