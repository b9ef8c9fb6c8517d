#include "runtime/cache_images.hpp"

#include "runtime/artifact_cache.hpp"

namespace ck {

CacheImages::CacheImages(KernelSource kernel, std::shared_ptr<ArtifactCache> cache)
    : kernel_(std::move(kernel)), cache_(std::move(cache))
{
}

std::vector<ImageCandidate> CacheImages::candidates(int cc_major, int cc_minor, std::vector<std::string>& report)
{
    std::vector<ImageCandidate> images;
    for (auto& candidate : cache_->candidates(kernel_, cc_major, cc_minor, report)) {
        std::string target = candidate.manifest.target;
        images.push_back({target, [cache = cache_, c = std::move(candidate)] { return cache->read(c); }});
    }
    return images;
}

std::string CacheImages::holder() const
{
    return "the cache " + cache_->root().string();
}

std::optional<ModuleImage> CacheImages::build(int cc_major, int cc_minor, std::string& /*why_not*/)
{
    return cache_->build(kernel_, cc_major, cc_minor);
}

}  // namespace ck
