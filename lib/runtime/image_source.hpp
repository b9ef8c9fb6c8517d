// Where a kernel's CUDA module images come from: the cache `build` fills
// (CacheImages) or a bundle file (BundleImages). CudaKernel asks one of these
// for the images that fit the device, best first, and loads the first that
// the driver accepts; the source looks each image up only when it is tried
// (a first call from a warm cache computes one key, not one per target) and
// verifies its checksum before handing its bytes over.
#pragma once

#include "cunumpy_kernels/kernel.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// An artifact ready for cuModuleLoadData.
struct ModuleImage {
    std::string bytes;         ///< cubin, or PTX with its terminating NUL
    std::string entry_symbol;  ///< the entry's name in the module
    CudaLoadInfo info;         ///< how it was found (device and seconds left to the caller)
};

/// An image that may fit the device, looked up and read only when it is tried.
struct ImageCandidate {
    std::string target;  ///< sm_90, compute_90, ...
    /// The checked bytes, or nullopt when the source holds no image of this
    /// target (for the cache: no entry of the current inputs). Throws
    /// ArtifactError when the image held is unusable or its size or SHA-256
    /// differ from the record (it is then never loaded), and the errors of
    /// computing its key (SourceError, UsageError).
    std::function<std::optional<ModuleImage>()> read;
};

/// One kernel's images. Implementations are used under CudaKernel's load
/// lock: one call at a time per kernel.
class ImageSource {
public:
    virtual ~ImageSource() = default;

    /// The images that may serve a device of compute capability
    /// `cc_major`.`cc_minor`, best first (rank_targets' order). `report`
    /// gets lines for the error when nothing fits.
    virtual std::vector<ImageCandidate> candidates(int cc_major, int cc_minor, std::vector<std::string>& report) = 0;

    /// Lines for the error when no candidate loaded: `missing` names the
    /// targets whose read() found nothing, `any_held` says whether any
    /// image was found (and refused or unusable). The cache says what it
    /// holds from other inputs when it held none of the current ones.
    virtual void explain_missing(const std::vector<std::string>& missing, bool any_held,
                                 std::vector<std::string>& report)
    {
        (void)missing, (void)any_held, (void)report;
    }

    /// "the cache" or "the bundle", and with its path: "the cache /root",
    /// for "nothing in the cache fits ...; the cache /root holds: ...".
    virtual std::string kind() const = 0;
    virtual std::string holder() const = 0;

    /// An image built now for `sm_<cc>` when no candidate loads, or nullopt
    /// when this source never builds (then `why_not` says what to do).
    /// Throws the build's error (ArtifactError, ToolchainError, ...).
    virtual std::optional<ModuleImage> build(int cc_major, int cc_minor, std::string& why_not) = 0;
};

}  // namespace ck
