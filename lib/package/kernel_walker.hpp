// The walks of package.hpp (find_kernels, kernel_of_file, kernels_of_paths),
// with a record of what was read.
#pragma once

#include "source/source_record.hpp"
#include "cunumpy_kernels/package.hpp"

namespace ck {

/// find_kernels, taking whether each host module binds its kernel's name
/// from `record` for modules unchanged since it was answered (null: every
/// module is read). Throws as find_kernels.
std::vector<KernelSource> find_kernels(const std::vector<std::filesystem::path>& paths, const Config& config,
                                       WalkWarning warn, SourceRecord* record);

/// The caller's walk warnings `warn` as the library calls them: printable
/// (util::printable), its exceptions the caller's (util::run_caller_code).
/// Empty when `warn` is.
WalkWarning caller_walk_warning(WalkWarning warn);

/// kernel_of_file, with `record` as find_kernels takes it.
std::optional<KernelSource> kernel_of_file(const std::filesystem::path& file, const Config& config,
                                           SourceRecord* record);

/// kernels_of_paths, with `record` as find_kernels takes it. Throws as kernels_of_paths.
std::vector<KernelSource> kernels_of_paths(const std::vector<std::filesystem::path>& paths, const Config& config,
                                           WalkWarning warn, SourceRecord* record);

/// The warning for a kernel whose dotted module was found already in another
/// folder (two trees with the same package names): the run keeps `kept` and
/// leaves `left_out` out, and the text names both folders.
std::string duplicate_module_warning(const KernelSource& left_out, const KernelSource& kept);

}  // namespace ck
