// The verified entry that serves a kernel's key: looked up in the cache's
// stores (the root `build` writes, and the unwritable preferred root when the
// root is the fallback), and its bytes read only after the checks that keep
// a damaged or tampered entry from any GPU: the manifest names the kernel and
// target asked for, no one else may write the entry or a folder above it,
// and the artifact's size and SHA-256 are the manifest's.
#pragma once

#include "cache/cache.hpp"
#include "cache/write_access.hpp"
#include "cuda_job/cuda_job.hpp"
#include "runtime/image_source.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// A cache entry that may fit the device.
struct ArtifactCandidate {
    Manifest manifest;
    std::filesystem::path entry;  ///< its folder
    std::string how;              ///< "cubin", "compatible cubin" or "ptx"
    std::filesystem::path root;   ///< the cache root it is in: who may write is checked from there down
};

/// What a lookup found.
struct EntryFound {
    std::optional<ArtifactCandidate> candidate;  ///< none when no usable entry is held
    /// Why the entry held is unusable (its manifest does not parse, an
    /// artifact is missing, it is another kernel's); "" when none is.
    std::string problem;
    /// The reading of the entry's manifest when its file was read, not
    /// taken from the key record: for the key record.
    std::optional<ManifestReading> read;
};

/// The entries of one cache, as the runtime loads them. Thread-safe.
class EntryLookup {
public:
    /// The stores of `location`. Without the compiler's identity
    /// (`identity_known` false), keys cannot be matched: only the latest
    /// entry of a kernel and target is, by all its other inputs. A
    /// read-only cache records no use. `cleared` (the memo of folders found
    /// not writable by others, shared with the key record) must outlive
    /// this object.
    EntryLookup(const CacheLocation& location, bool identity_known, bool read_only, ClearedFolders& cleared);

    /// The store of the root `build` writes.
    const EntryStore& store() const { return store_; }

    /// The entry of `job`. `kept` is the reading of its manifest the key
    /// record kept, or null; it replaces reading the file while the file's
    /// stat is unchanged, unless `check_kept` (CUNUMPY_KERNELS_KEY_RECORD=
    /// check), which reads the file and throws ArtifactError when the two
    /// differ in what loading reads. Records a hit's use in the writable
    /// store. Never throws otherwise: a damaged entry is a `problem`.
    EntryFound find(const CudaJob& job, const ManifestReading* kept, bool check_kept) const;

    /// Lines for the error when nothing fits: the entries the cache holds
    /// for `kernel` from other inputs, or that it holds none.
    std::vector<std::string> held(const KernelSource& kernel) const;

    /// The candidate's bytes after checking who may write its entry and
    /// folders (other_writable_problem) and its size and SHA-256 against the
    /// manifest. Throws ArtifactError when a check fails (never loaded).
    ModuleImage read(const ArtifactCandidate& candidate) const;

    /// How many images read() gave (the cache's load hits).
    std::uint64_t images_read() const { return images_read_; }
    /// How many manifests find() took from the key record rather than read.
    std::size_t manifests_from_record() const { return manifests_from_record_; }

private:
    /// The stores entries are looked up in: the root's, then the unwritable
    /// preferred root's when the root is the fallback.
    std::vector<const EntryStore*> stores() const;
    EntryFound find_by_key(const EntryStore& store, const CudaJob& job, const ManifestReading* kept,
                           bool check_kept) const;
    std::optional<ArtifactCandidate> find_latest(const EntryStore& store, const CudaJob& job) const;
    /// Throws ArtifactError when the entry, its files or a folder above it
    /// can be written by others (other_writable_problem).
    void check_write_access(const std::filesystem::path& root, const std::filesystem::path& entry,
                            const std::string& artifact) const;

    EntryStore store_;
    std::optional<EntryStore> also_read_;  ///< the unwritable preferred root, when the root is the fallback
    bool identity_known_;
    bool read_only_;
    /// The cache's own folders above its entries (root, kind, shard) and its
    /// key records found not writable by others, checked once for the life
    /// of this object; an entry's folder and files are checked at every read.
    ClearedFolders& cleared_folders_;
    mutable std::atomic<std::uint64_t> images_read_{0};
    mutable std::atomic<std::size_t> manifests_from_record_{0};
};

}  // namespace ck
