// The end of every CUDA build, whoever compiled: `build` (builder/cuda_build)
// and the runtime's NVRTC build on a miss (runtime/miss_build) publish through
// this one path, so an entry is checked, described and made visible the same
// way whichever made it.
#pragma once

#include "cache/cache.hpp"
#include "compilers/cuda_compiler.hpp"
#include "cuda_job/cuda_job.hpp"

#include <filesystem>
#include <memory>

namespace ck {

/// One CUDA job's output on its way into a cache, in two steps so that a
/// kernel's targets can be staged all before any is published (`build`
/// publishes a kernel whole or not at all). Nothing is visible to readers
/// until publish(); an object dropped before it leaves nothing behind.
class CudaCommit {
public:
    /// Checks `output`'s artifact for `job` (check_cuda_output) and writes it
    /// into a private folder under `store`'s root. Throws ArtifactCheckError
    /// when the artifact could not be loaded for the target or lacks the
    /// kernel's entry (nothing is written), CacheError on I/O failure.
    CudaCommit(const EntryStore& store, const CudaJob& job, const CudaCompileOutput& output, double seconds);
    ~CudaCommit();
    CudaCommit(const CudaCommit&) = delete;
    CudaCommit& operator=(const CudaCommit&) = delete;

    /// The manifest publish() writes: key, kernel, target, entry symbol, the
    /// artifact's size and SHA-256, the compiler's log and dependencies.
    const Manifest& manifest() const { return manifest_; }

    /// Writes the manifest, renames the entry into place (EntryWriter::commit:
    /// another builder's entry of the same key is kept), tags the cache
    /// (CACHEDIR.TAG) and records the entry as the latest of its kernel and
    /// target. Returns the entry's folder. Throws CacheError on I/O failure,
    /// leaving no entry behind. Call once.
    std::filesystem::path publish();

private:
    const EntryStore& store_;
    const CudaJob& job_;
    std::unique_ptr<EntryWriter> writer_;
    Manifest manifest_;
};

/// Both steps of CudaCommit for one target: checks, stages and publishes
/// `output` as `job`'s entry in `store`; returns the artifact's path in the
/// published entry. Throws as CudaCommit and CudaCommit::publish.
std::filesystem::path commit_cuda_entry(const EntryStore& store, const CudaJob& job, const CudaCompileOutput& output,
                                        double seconds);

}  // namespace ck
