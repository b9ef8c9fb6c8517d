// `build` and `status` compare every built cubin's parameter layout (read
// from the cubin, cubin_parameters.hpp) with what the runtime will pack: the
// kernel's declaration as the runtime reads it, with the layouts of the
// structs in the configured struct headers.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "runtime/parameter_layout.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ck {

/// What the runtime packs for one kernel.
struct KernelLayout {
    std::string kernel;
    /// nullopt: the runtime cannot read the declaration (check-signatures and
    /// the first call report it); no layout to compare.
    std::optional<std::vector<KernelParameter>> parameters;
    StructLayouts structs;  ///< the configured layouts its struct parameters take
};

/// The layout the runtime packs for `kernel` (its CUDA declaration read as
/// the runtime reads it, template arguments applied), with `structs`.
KernelLayout runtime_layout(const KernelSource& kernel, const Config& config, const StructLayouts& structs);

/// Throws ArtifactCheckError (check parameter_layout) naming `what` (the
/// artifact), the kernel, the parameter and both layouts when `cubin` lays
/// out the parameters of `entry_symbol` otherwise than `expected`, or, when
/// `require_records`, has no `.nv.info` section for it (what ptxas always
/// writes: `build` refuses a cubin without one, so `status` need not);
/// ArtifactError for a damaged section. A `compute_*` target (PTX) has
/// nothing to compare.
void check_cubin_layout(const std::string& cubin, const std::string& target, const std::string& entry_symbol,
                        const std::string& what, const KernelLayout& expected, bool require_records = true);

}  // namespace ck
