// Which artifact targets can serve a device, best first: one ranking for the
// cache (ArtifactCache::candidates) and for bundles (BundleImages), so that a
// rank loads the same target from either.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ck {

/// A target name taken apart: `sm_90` is a cubin of 90, `compute_90` PTX of 90.
struct ParsedTarget {
    bool cubin = false;
    int number = 0;  ///< 90 for sm_90 and compute_90; 0 when the name has no number
};

/// `sm_XX`, `compute_XX` (an `a`/`f` suffix is ignored, `sm_90a` is 90).
ParsedTarget parse_target(const std::string& target);

/// One target that fits a device, with how it would be loaded.
struct RankedTarget {
    std::size_t index;  ///< into the list given to rank_targets
    const char* how;    ///< "cubin", "compatible cubin" or "ptx"
};

/// The targets of `targets` that a device of compute capability
/// `cc_major`.`cc_minor` can load, best first: the cubin of its
/// architecture, then compatible cubins (same major, lower minor, newest
/// first), then PTX not newer than the device (newest first). Targets that
/// cannot serve are left out.
std::vector<RankedTarget> rank_targets(const std::vector<std::string>& targets, int cc_major, int cc_minor);

}  // namespace ck
