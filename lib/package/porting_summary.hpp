// The porting line of cunumpy's KernelCatalog.summary(), shared by the
// runtime's KernelCatalog::summary() and `cunumpy-kernels status`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ck {

/// "CUDA kernels: <total - missing> of <total>", followed, when `missing` is
/// not empty, by " (missing: a, b, ...)" naming at most `max_missing` of the
/// kernels without CUDA kernel, in the order given, then "...".
std::string porting_summary(std::size_t total, const std::vector<std::string>& missing, std::size_t max_missing);

}  // namespace ck
