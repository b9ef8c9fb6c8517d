#include "runtime/cache_images.hpp"

#include "runtime/artifact_cache.hpp"
#include "util/text.hpp"

namespace ck {

CacheImages::CacheImages(KernelSource kernel, std::shared_ptr<ArtifactCache> cache)
    : kernel_(std::move(kernel)), cache_(std::move(cache))
{
}

std::vector<ImageCandidate> CacheImages::candidates(int cc_major, int cc_minor, std::vector<std::string>& /*report*/)
{
    std::vector<ImageCandidate> images;
    for (auto& target : cache_->serving(cc_major, cc_minor)) {
        images.push_back({target.target, [this, target]() -> std::optional<ModuleImage> {
                              auto candidate = cache_->find(kernel_, target);
                              if (!candidate) return std::nullopt;
                              return cache_->read(*candidate);
                          }});
    }
    return images;
}

void CacheImages::explain_missing(const std::vector<std::string>& missing, bool any_held,
                                  std::vector<std::string>& report)
{
    if (!missing.empty()) report.push_back("no entry of the current inputs for " + util::comma_list(missing));
    if (!any_held)
        for (auto& line : cache_->held(kernel_)) report.push_back(std::move(line));
}

std::string CacheImages::holder() const { return "the cache " + cache_->root().string(); }

std::optional<ModuleImage> CacheImages::build(int cc_major, int cc_minor, std::string& /*why_not*/)
{
    return cache_->build(kernel_, cc_major, cc_minor);
}

}  // namespace ck
