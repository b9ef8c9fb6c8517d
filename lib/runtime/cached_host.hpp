// A kernel's Pyccel host version taken from the cache `build` fills: the host
// library of its module (doc/host-libraries.md), loaded without Python and
// called through the shim's C ABI as the kernel's "pyccel" implementation.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// One parameter as the library's description declares it.
struct HostLibraryParameter {
    std::string name;
    ElementType type = ElementType::float64;
    int rank = 0;  ///< 0: a scalar
    char order = 'A';
};

/// A function of a host library's description; `skip_reason` set for a
/// function the shim gives no entry.
struct HostLibraryFunction {
    std::string name;
    std::vector<HostLibraryParameter> parameters;
    std::string skip_reason;
};

/// Parses a library's description text (host_library_description's format).
/// Throws CacheError naming `where` for a line it cannot read.
std::vector<HostLibraryFunction> parse_host_library_description(const std::string& text, const std::string& where);

/// The cached host kernel of `source` under the cache root `root`: the latest
/// host entry of its module (EntryStore::latest, as `build` records it) whose
/// recorded source digest is the module's current one, its library's checksum
/// verified; else (no such entry with a library, or no `root`) the library
/// `build --in-place` left beside the module, when its in-place record holds
/// the current source digest and lists it. The library is loaded (dlopen,
/// RTLD_NOW, never unloaded) and its `ck_host__<name>` entry found.
/// Nothing when the kernel has no Pyccel module, neither a current entry nor
/// an in-place build, or no library (a build made before libraries). When the
/// library exists but cannot serve the kernel (a parameter the shim does not
/// handle, a library that does not load), nothing and `note` says why.
/// Edits of modules it imports are not seen here: `build` makes a new entry.
/// The HostKernel converts scalars as convert_scalar does and passes arrays
/// as views, without copies; a wrong element type, rank, layout or a device
/// array is an ArgumentError naming the argument.
std::optional<HostKernel> cached_host_kernel(const KernelSource& source,
                                             const std::optional<std::filesystem::path>& root, std::string* note);

/// cached_host_kernel for a kernel of `config` (the cache of its top-level
/// package or `cache-name`, where `build` writes it); when the cache
/// location cannot be worked out, the in-place build alone, and `note` says
/// why when there is none.
std::optional<HostKernel> cached_host_kernel(const KernelSource& source, const Config& config, std::string* note);

}  // namespace ck
