#include "runtime/bundle_images.hpp"

#include "cunumpy_kernels/error.hpp"
#include "runtime/bundle_check.hpp"
#include "runtime/target_ranking.hpp"
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
        images.push_back(
            {artifact.target, [this, &artifact, how = std::string(fit.how)]() -> std::optional<ModuleImage> {
                 return read(artifact, how);
             }});
    }
    if (images.empty())
        report.push_back("kernel '" + kernel().name + "' for " +
                         (targets.empty() ? "no target" : util::comma_list(targets)) + ", none of which runs on sm_" +
                         std::to_string(cc_major) + std::to_string(cc_minor));
    return images;
}

std::string BundleImages::holder() const { return "the bundle " + bundle_->file.string(); }

std::optional<ModuleImage> BundleImages::build(int cc_major, int cc_minor, std::string& why_not)
{
    std::string arch = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
    if (corrupt_seen_) {
        why_not = "The bundle " + bundle_->file.string() +
                  " is corrupt (above) and is never compiled from at run time: "
                  "make it again (cunumpy-kernels build, then cunumpy-kernels bundle with the same flags), or copy it "
                  "again if the copy was damaged";
        return std::nullopt;
    }
    why_not =
        "A bundle is never compiled from at run time (no NVRTC build): build and bundle a target this device "
        "runs (cunumpy-kernels build --arch " +
        arch +
        " ..., then cunumpy-kernels bundle with the same flags), "
        "or open the catalog with KernelCatalog::from_package";
    return std::nullopt;
}

ModuleImage BundleImages::read(const BundleArtifact& artifact, const std::string& how)
{
    try {
        check_bundle_artifact(*bundle_, kernel(), artifact);
    } catch (const ArtifactError&) {
        corrupt_seen_ = true;
        throw;
    }
    ModuleImage image;
    image.bytes = std::string(bundle_->artifact_bytes(artifact));
    if (!parse_target(artifact.target).cubin) image.bytes.push_back('\0');  // PTX is loaded as a C string
    image.entry_symbol = artifact.entry_symbol.empty() ? kernel().name : artifact.entry_symbol;
    image.info.how = "bundle " + how;
    image.info.target = artifact.target;
    image.info.key = artifact.key;
    image.info.artifact = bundle_->artifact_name(kernel(), artifact);
    return image;
}

}  // namespace ck
