// Structs passed by value that no configured struct header defines: their
// layout is compared neither with a Python CudaStruct (check-signatures) nor
// with the cubins (build, status), so check-signatures says so.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "runtime/parameter_layout.hpp"

#include <string>
#include <vector>

namespace ck {

/// One warning per struct type that a ported kernel of `kernels` takes by
/// value and `structs` (the configured headers' layouts) lacks, in the walk
/// warnings' form "<first CUDA file>: <message>": the struct, how many
/// kernels take it and which, and what to add to `struct-headers`.
/// Kernels whose declaration cannot be read are left to the signature check.
std::vector<std::string> unchecked_struct_warnings(const std::vector<KernelSource>& kernels, const Config& config,
                                                   const StructLayouts& structs);

}  // namespace ck
