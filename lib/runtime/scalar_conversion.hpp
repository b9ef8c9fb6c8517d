// cunumpy's scalar conversion without building an error message on success:
// the launch path converts every scalar of every call.
#pragma once

#include "cunumpy_kernels/arguments.hpp"

#include <string>

namespace ck {

/// Converts as convert_scalar does; returns "" on success, else the reason
/// ("1099511627776 is out of range [-2147483648, 2147483647]").
std::string try_convert_scalar(const Argument& argument, ElementType to, void* out);

}  // namespace ck
