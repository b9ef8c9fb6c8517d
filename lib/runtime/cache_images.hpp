// A kernel's images from the cache `build` fills: the ImageSource of kernels
// opened with KernelCatalog::from_package and Kernel::from_folder. Builds
// with NVRTC (and publishes) when nothing in the cache fits.
#pragma once

#include "cunumpy_kernels/package.hpp"

#include "runtime/image_source.hpp"

#include <memory>

namespace ck {

class ArtifactCache;

class CacheImages : public ImageSource {
public:
    /// `kernel` must have a CUDA source; `cache` is shared by the kernels of one cache name.
    CacheImages(KernelSource kernel, std::shared_ptr<ArtifactCache> cache);

    std::vector<ImageCandidate> candidates(int cc_major, int cc_minor, std::vector<std::string>& report) override;
    void explain_missing(const std::vector<std::string>& missing, bool any_held,
                         std::vector<std::string>& report) override;
    std::string kind() const override { return "the cache"; }
    std::string holder() const override;
    std::optional<ModuleImage> build(int cc_major, int cc_minor, std::string& why_not) override;

private:
    KernelSource kernel_;
    std::shared_ptr<ArtifactCache> cache_;
};

}  // namespace ck
