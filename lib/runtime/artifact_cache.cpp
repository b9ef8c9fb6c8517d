#include "runtime/artifact_cache.hpp"

#include "cunumpy_kernels/error.hpp"

#include "cache/cache_stats.hpp"
#include "compilers/cuda_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
#include "compilers/tool_probe.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "runtime/target_ranking.hpp"

#include <algorithm>
#include <chrono>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

// Every target whose artifact might run on a device of compute capability
// major.minor: its own cubin, the cubins of lower minors, PTX of the known
// architectures, and every target the config builds (`sm_100a`, `sm_100f`,
// their PTX). rank_targets keeps those the driver would load.
std::vector<std::string> serving_targets(const Config& config, int major, int minor)
{
    std::vector<std::string> targets;
    auto add = [&](const std::string& target) {
        if (std::find(targets.begin(), targets.end(), target) == targets.end()) targets.push_back(target);
    };
    for (const auto& target : cuda_targets(config)) add(target);
    for (int m = minor; m >= 0; --m) add("sm_" + std::to_string(major) + std::to_string(m));
    std::set<int> ptx = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
    for (const auto& arch : config.architectures) ptx.insert(parse_target(arch).number);
    for (auto n = ptx.rbegin(); n != ptx.rend(); ++n)
        if (*n > 0) add("compute_" + std::to_string(*n));
    return targets;
}

std::unique_ptr<ToolProbe> probe_of(const CacheLocation& location)
{
    return std::make_unique<ToolProbe>(
        location.root / ".probes", location.fallback ? std::optional(location.preferred / ".probes") : std::nullopt);
}

}  // namespace

ArtifactCache::ArtifactCache(Config config, const std::string& cache_name, bool read_only, WarningSink warn,
                             std::unique_ptr<CudaCompiler> miss_compiler)
    : config_(std::move(config)),
      location_(planned_cache_location(cache_name, config_.cache_dir)),
      read_only_(read_only),
      probe_(probe_of(location_)),
      miss_compiler_(miss_compiler ? std::move(miss_compiler)
                                   : std::make_unique<NvrtcCompiler>(cuda_root_of(config_), probe_.get())),
      keys_(config_, key_compiler(config_, *probe_, *miss_compiler_), *probe_, location_,
            key_record_mode_from_environment(), read_only, &cleared_folders_),
      entries_(location_, keys_.identity_known(), read_only, cleared_folders_),
      miss_build_(config_, location_, *probe_, *miss_compiler_, entries_, read_only, std::move(warn))
{
}

ArtifactCache::~ArtifactCache()
{
    CacheCounters counters;
    counters.load_hits = entries_.images_read();
    counters.load_misses = miss_build_.compiled();
    // A fallback root no build made is not made for counters alone.
    std::error_code error;
    if (!read_only_ && (!location_.fallback || fs::is_directory(location_.root, error)))
        add_counters(location_.root, counters);
}

std::vector<ServingTarget> ArtifactCache::serving(int cc_major, int cc_minor) const
{
    std::vector<std::string> targets = serving_targets(config_, cc_major, cc_minor);
    std::vector<ServingTarget> ranked;
    for (const auto& fit : rank_targets(targets, cc_major, cc_minor)) ranked.push_back({targets[fit.index], fit.how});
    return ranked;
}

std::optional<ArtifactCandidate> ArtifactCache::find(const KernelSource& kernel, const ServingTarget& target)
{
    const CudaJob& job = keys_.job(kernel, target.target);
    auto looked_up_at = std::chrono::system_clock::now();
    EntryFound found = entries_.find(job, keys_.kept_manifest(job.key), keys_.mode() == KeyRecordMode::check);
    keys_.keep(job, found.read ? &*found.read : nullptr, looked_up_at);
    if (!found.problem.empty()) throw ArtifactError(target.target + ": unusable entry: " + found.problem);
    if (found.candidate) found.candidate->how = target.how;
    return std::move(found.candidate);
}

}  // namespace ck
