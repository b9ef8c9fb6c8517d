// A kernel's images from a bundle file (KernelCatalog::from_bundle): ranked
// as the cache ranks its entries (rank_targets), each checked against its
// recorded SHA-256 before its bytes are handed to the driver. A bundle never
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
    /// Always nullopt: a bundle is never compiled from at run time.
    std::optional<ModuleImage> build(int cc_major, int cc_minor, std::string& why_not) override;

    /// The checked image of `artifact`, loaded as `how` ("cubin", "ptx", ...).
    /// Throws ArtifactError when its size or SHA-256 differ from the record.
    ModuleImage read(const BundleArtifact& artifact, const std::string& how) const;

private:
    const BundleKernel& kernel() const { return bundle_->catalog.kernels[kernel_]; }

    std::shared_ptr<const Bundle> bundle_;
    std::size_t kernel_;
};

}  // namespace ck
