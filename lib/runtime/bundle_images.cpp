#include "runtime/bundle_images.hpp"

#include "cunumpy_kernels/error.hpp"
#include "runtime/target_ranking.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

namespace ck {

BundleImages::BundleImages(std::shared_ptr<const Bundle> bundle, std::size_t kernel)
    : bundle_(std::move(bundle)), kernel_(kernel)
{
}

std::vector<ImageCandidate> BundleImages::candidates(int cc_major, int cc_minor, std::vector<std::string>& report)
{
    const auto& artifacts = kernel().artifacts;
    std::vector<std::string> targets;
    for (const auto& a : artifacts) targets.push_back(a.target);
    std::vector<ImageCandidate> images;
    for (const auto& fit : rank_targets(targets, cc_major, cc_minor)) {
        const BundleArtifact& artifact = artifacts[fit.index];
        images.push_back({artifact.target, [this, &artifact, how = std::string(fit.how)]() -> std::optional<ModuleImage> {
                              return read(artifact, how);
                          }});
    }
    if (images.empty())
        report.push_back("kernel '" + kernel().name + "' for " + (targets.empty() ? "no target" : util::comma_list(targets)) +
                         ", none of which runs on sm_" + std::to_string(cc_major) + std::to_string(cc_minor));
    return images;
}

std::string BundleImages::holder() const
{
    return "the bundle " + bundle_->file.string();
}

std::optional<ModuleImage> BundleImages::build(int cc_major, int cc_minor, std::string& why_not)
{
    std::string arch = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
    why_not = "A bundle is never compiled from at run time (no NVRTC build): build and bundle a target this device "
              "runs (cunumpy-kernels build --arch " + arch + " ..., then cunumpy-kernels bundle with the same flags), "
              "or open the catalog with KernelCatalog::from_package";
    return std::nullopt;
}

ModuleImage BundleImages::read(const BundleArtifact& artifact, const std::string& how) const
{
    std::string name = bundle_->artifact_name(kernel(), artifact);
    std::string_view bytes = bundle_->artifact_bytes(artifact);
    std::string digest = sha256_hex(bytes);
    if (bytes.size() != artifact.size || digest != artifact.sha256)
        throw ArtifactError(name + ": checksum mismatch (recorded sha256 " + artifact.sha256 + ", bytes " + digest +
                            "); the bundle is corrupt and this artifact was not loaded: copy the bundle again or make "
                            "it again (cunumpy-kernels bundle)");
    ModuleImage image;
    image.bytes = std::string(bytes);
    if (!parse_target(artifact.target).cubin) image.bytes.push_back('\0');  // PTX is loaded as a C string
    image.entry_symbol = artifact.entry_symbol.empty() ? kernel().name : artifact.entry_symbol;
    image.info.how = "bundle " + how;
    image.info.target = artifact.target;
    image.info.key = artifact.key;
    image.info.artifact = name;
    return image;
}

}  // namespace ck
