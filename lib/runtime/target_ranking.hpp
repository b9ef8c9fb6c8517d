// Which artifact targets can serve a device, best first: one ranking for the
// cache (CacheImages) and for bundles (BundleImages), so that a
// rank loads the same target from either. The rules are the driver's (CUDA
// programming guide, "Compute Capability" and "Feature Availability", CUDA
// 12.9+): a plain cubin `sm_XY` runs on major X, minor >= Y; an
// architecture-specific `sm_XYa` only on X.Y; a family-specific `sm_XYf` on
// major X, minor >= Y. PTX `compute_XY` is JIT-compiled on any device of
// X.Y or newer; `compute_XYa` only on X.Y; `compute_XYf` within its family.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ck {

/// A target name taken apart: `sm_90a` is a cubin of 90, architecture-specific.
struct ParsedTarget {
    bool cubin = false;
    int number = 0;    ///< 90 for sm_90 and compute_90; 0 when the name has no number
    char feature = 0;  ///< 'a' (architecture-specific), 'f' (family-specific) or 0 (plain)
};

/// `sm_XX`, `compute_XX`, each with an optional `a` or `f` suffix.
ParsedTarget parse_target(const std::string& target);

/// Whether a device of compute capability `cc_major`.`cc_minor` loads an
/// artifact of `target` (the driver's rules above).
bool target_runs_on(const ParsedTarget& target, int cc_major, int cc_minor);

/// One target that fits a device, with how it would be loaded.
struct RankedTarget {
    std::size_t index;  ///< into the list given to rank_targets
    const char* how;    ///< "cubin", "compatible cubin" or "ptx"
};

/// The targets of `targets` that a device of compute capability
/// `cc_major`.`cc_minor` can load (target_runs_on), best first: the cubins
/// of its architecture (architecture-specific, then family-specific, then
/// plain), then compatible cubins (same major, lower minor, newest first),
/// then PTX (newest first). Targets that cannot serve are left out.
std::vector<RankedTarget> rank_targets(const std::vector<std::string>& targets, int cc_major, int cc_minor);

}  // namespace ck
