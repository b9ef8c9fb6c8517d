// A kernel's images from a bundle file (KernelCatalog::from_bundle): ranked
// as the cache ranks its entries (rank_targets), each checked as `build`
// checks what it publishes (check_bundle_artifact: SHA-256, entry symbol,
// architecture) before its bytes are handed to the driver. A bundle never
// builds: when nothing fits the device, the error says which targets it holds.
#pragma once

#include "runtime/bundle_format.hpp"
#include "runtime/image_source.hpp"

#include <memory>

namespace ck {

class BundleImages : public ImageSource {
public:
    /// The images of kernel `kernel` (an index into bundle->catalog.kernels).
    BundleImages(std::shared_ptr<const Bundle> bundle, std::size_t kernel);

    std::vector<ImageCandidate> candidates(int cc_major, int cc_minor, std::vector<std::string>& report) override;
    std::string kind() const override { return "the bundle"; }
    std::string holder() const override;
    /// Always nullopt: a bundle is never compiled from at run time. `why_not`
    /// says to make the bundle again once read() refused an artifact.
    std::optional<ModuleImage> build(int cc_major, int cc_minor, std::string& why_not) override;

    /// The checked image of `artifact`, loaded as `how` ("cubin", "ptx", ...).
    /// Throws ArtifactError as check_bundle_artifact (naming the bundle, the
    /// kernel, the target, what is wrong and what to do).
    ModuleImage read(const BundleArtifact& artifact, const std::string& how);

private:
    const BundleKernel& kernel() const { return bundle_->catalog.kernels[kernel_]; }

    std::shared_ptr<const Bundle> bundle_;
    std::size_t kernel_;
    bool corrupt_seen_ = false;  ///< read() refused an artifact (ImageSource calls are serialised per kernel)
};

}  // namespace ck
