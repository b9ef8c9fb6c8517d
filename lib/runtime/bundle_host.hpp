// A kernel's Pyccel host version from a bundle (doc/bundle.md): the host
// library `cunumpy-kernels bundle` took from the cache, loaded on a rank
// without the cache, the sources or Python.
#pragma once

#include "cunumpy_kernels/kernel.hpp"
#include "runtime/bundle_format.hpp"

#include <optional>
#include <string>

namespace ck {

/// The "pyccel" host kernel of `kernel` from `bundle`: its host library's
/// bytes, checked against the header's SHA-256, loaded from an anonymous
/// memory file (memfd: a rank writes nothing to disk) as
/// load_host_library_kernel loads a cached one. Nothing, with `note`
/// saying why, when the bundle carries none for the kernel (its note), its
/// platform is not this machine's (host_platform), the bytes differ from the
/// header, or the library cannot serve the kernel; `note` stays empty for a
/// kernel without a Pyccel module. Never throws for those.
std::optional<HostKernel> bundle_host_kernel(const Bundle& bundle, const BundleKernel& kernel, std::string* note);

}  // namespace ck
