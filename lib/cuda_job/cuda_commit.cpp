#include "cuda_job/cuda_commit.hpp"

#include "util/utc_time.hpp"

namespace ck {

namespace {

Manifest manifest_of(const CudaJob& job, const CudaCompileOutput& output, double seconds, Artifact artifact)
{
    Manifest manifest;
    manifest.key = job.key;
    manifest.kind = "cuda";
    manifest.module = job.kernel->module;
    manifest.kernel = job.kernel->name;
    manifest.entry_symbol = output.entry_symbol;
    manifest.target = job.target;
    manifest.inputs = job.inputs;
    manifest.artifacts.push_back(std::move(artifact));
    manifest.built_at = util::utc_now();
    manifest.seconds = seconds;
    manifest.log = output.log;
    manifest.compiler_dependencies = output.dependencies;
    return manifest;
}

}  // namespace

CudaCommit::CudaCommit(const EntryStore& store, const CudaJob& job, const CudaCompileOutput& output, double seconds)
    : store_(store), job_(job)
{
    // Checked here, not only by the callers, so that no path into the cache
    // can skip it: an unloadable artifact would be served to every rank.
    check_cuda_output(job, output);
    writer_ = std::make_unique<EntryWriter>(store.root(), "cuda", job.key);
    manifest_ = manifest_of(job, output, seconds, writer_->add_file(job.artifact_file(), job.target, output.artifact));
}

CudaCommit::~CudaCommit() = default;

std::filesystem::path CudaCommit::publish()
{
    std::filesystem::path entry = writer_->commit(manifest_);
    store_.ensure_tagged();
    store_.remember_latest("cuda", job_.kernel->module, job_.target, job_.key);
    return entry;
}

std::filesystem::path commit_cuda_entry(const EntryStore& store, const CudaJob& job, const CudaCompileOutput& output,
                                        double seconds)
{
    CudaCommit commit(store, job, output, seconds);
    std::filesystem::path entry = commit.publish();
    return entry / commit.manifest().artifacts.front().file;
}

}  // namespace ck
