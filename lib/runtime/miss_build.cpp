#include "runtime/miss_build.hpp"

#include "cunumpy_kernels/error.hpp"

#include "cache/build_lock.hpp"
#include "compilers/artifact_check.hpp"
#include "compilers/cuda_compiler.hpp"
#include "cuda_job/cuda_commit.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "runtime/entry_lookup.hpp"
#include "util/elapsed.hpp"

#include <chrono>

namespace ck {

namespace fs = std::filesystem;

MissBuild::MissBuild(Config config, const CacheLocation& location, const ToolProbe& probe, const CudaCompiler& compiler,
                     const EntryLookup& entries, bool read_only, WarningSink warn)
    : config_(std::move(config)),
      location_(location),
      probe_(probe),
      compiler_(compiler),
      entries_(entries),
      read_only_(read_only),
      warn_(std::move(warn))
{
}

CudaJob MissBuild::job_of(const KernelSource& kernel, const std::string& target)
{
    std::lock_guard lock(plans_mutex_);
    std::string name = kernel.module + "@" + target;
    if (auto it = plans_.find(name); it != plans_.end()) return it->second;
    Config config = config_;
    config.architectures = {target};
    config.ptx = false;
    config.compiler = CudaCompilerKind::nvrtc;
    CudaPlanner planner(config, compiler_.identity(), cunumpy_dir_resolver(config, probe_, false),
                        compiler_facts(compiler_));
    return plans_.emplace(name, planner.plan(kernel).front()).first->second;
}

std::optional<ModuleImage> MissBuild::published_image(const CudaJob& job) const
{
    const EntryStore& store = entries_.store();
    auto manifest = store.find("cuda", job.key);
    if (!manifest) return std::nullopt;
    try {
        return entries_.read(ArtifactCandidate{*manifest, store.entry_dir("cuda", job.key), "cubin", store.root()});
    } catch (const ArtifactError&) {
        return std::nullopt;  // corrupt: built again, in memory if it cannot replace the entry
    }
}

ModuleImage MissBuild::build(const KernelSource& kernel, int cc_major, int cc_minor)
{
    CudaJob job = job_of(kernel, "sm_" + std::to_string(cc_major) + std::to_string(cc_minor));
    std::lock_guard lock(build_mutex_);
    // Another thread or process may have published it meanwhile.
    if (auto image = published_image(job)) return std::move(*image);
    if (read_only_) return compile(job);
    // Ranks that miss together compile once: the others wait for the entry.
    const EntryStore& store = entries_.store();
    LockEvents events;
    events.broken = warn_;
    auto build_lock = BuildLock::acquire(
        store.lock_file("cuda", job.key), [&] { return store.find("cuda", job.key).has_value(); },
        LockTiming::from_environment(), events);
    if (!build_lock)
        if (auto image = published_image(job)) return std::move(*image);
    return compile(job);
}

ModuleImage MissBuild::compile(const CudaJob& job)
{
    const KernelSource& kernel = *job.kernel;
    auto start = std::chrono::steady_clock::now();
    CudaCompileOutput output = compiler_.compile(compile_request(job));
    double seconds = util::seconds_since(start);
    if (!output.ok)
        throw ArtifactError("kernel '" + kernel.name + "': NVRTC could not build " + kernel.cuda_file->string() +
                            " for " + job.target + ":\n" + output.log);
    // Checked before the image leaves, published or not (a read-only cache
    // keeps it in memory); CudaCommit checks again on its way in.
    try {
        check_cuda_output(job, output);
    } catch (const ArtifactCheckError& error) {
        throw ArtifactCheckError(error.check(), error.finding(),
                                 "kernel '" + kernel.name +
                                     "': NVRTC built an artifact that cannot be loaded, and it "
                                     "was not published: " +
                                     error.what());
    }
    ++compiled_;
    ModuleImage image;
    image.info.how = "nvrtc";
    image.info.target = job.target;
    image.info.key = job.key;
    image.info.published = publish(job, output, seconds, image.info.artifact);
    image.bytes = std::move(output.artifact);
    image.entry_symbol = output.entry_symbol;
    return image;
}

bool MissBuild::publish(const CudaJob& job, const CudaCompileOutput& output, double seconds, fs::path& artifact)
{
    if (read_only_) return false;
    try {
        CacheLocation writable = resolve_cache_location(location_.name, config_.cache_dir, true);
        if (writable.root != location_.root) {
            if (warn_)
                warn_("cache " + location_.root.string() + " is not writable: kernel '" + job.kernel->name +
                      "' built by NVRTC is kept in memory for this process");
            return false;
        }
        artifact = commit_cuda_entry(entries_.store(), job, output, seconds);
        return true;
    } catch (const CacheError& error) {
        if (warn_)
            warn_(std::string(error.what()) + ": kernel '" + job.kernel->name + "' built by NVRTC is kept in memory");
        return false;
    }
}

}  // namespace ck
