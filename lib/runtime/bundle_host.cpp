#include "runtime/bundle_host.hpp"

#include "cunumpy_kernels/error.hpp"
#include "runtime/cached_host.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace ck {

namespace {

std::optional<HostKernel> load_from_memory(const Bundle& bundle, const BundleKernel& kernel, std::string* note)
{
    const BundleArtifact& artifact = *kernel.host_library;
    std::string name = bundle.artifact_name(kernel, artifact);
    std::string_view bytes = bundle.artifact_bytes(artifact);
    if (sha256_hex(bytes) != artifact.sha256) {
        *note = name + ": checksum mismatch; make the bundle again (cunumpy-kernels bundle)";
        return std::nullopt;
    }
    return load_host_library_bytes(kernel.name, bytes, name, note);
}

}  // namespace

std::optional<HostKernel> bundle_host_kernel(const Bundle& bundle, const BundleKernel& kernel, std::string* note)
{
    if (!kernel.host_library) {
        if (!kernel.host_library_note.empty())
            *note = "the bundle carries no host library: " + kernel.host_library_note;
        return std::nullopt;
    }
    if (bundle.catalog.host_platform != host_platform()) {
        *note = "the bundle's host libraries are for " + bundle.catalog.host_platform + ", this machine is " +
                host_platform() + "; make the bundle on a machine of this platform";
        return std::nullopt;
    }
    try {
        return load_from_memory(bundle, kernel, note);
    } catch (const Error& error) {
        *note = error.what();
        return std::nullopt;
    }
}

}  // namespace ck
