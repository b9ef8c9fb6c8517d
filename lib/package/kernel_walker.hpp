// The walk of package.hpp's find_kernels, with a record of what was read.
#pragma once

#include "cache/source_record.hpp"
#include "cunumpy_kernels/package.hpp"

namespace ck {

/// find_kernels, taking whether each host module binds its kernel's name
/// from `record` for modules unchanged since it was answered (null: every
/// module is read). Throws as find_kernels.
std::vector<KernelSource> find_kernels(const std::vector<std::filesystem::path>& paths, const Config& config,
                                       WalkWarning warn, SourceRecord* record);

}  // namespace ck
