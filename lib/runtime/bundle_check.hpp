// Checking a bundle's artifact before anything uses it: its bytes are those
// the header records (SHA-256), they pass build's load checks for the target
// and entry the header files them under (compilers/artifact_check.hpp: the
// cubin's architecture and entry symbol, the PTX's .target and .entry), and
// the record is the kernel's own (its entry is the kernel's, its key inputs
// name the kernel and the target). The header's checksum covers the header
// only: a header that files one kernel's artifact under another (a writer's
// bug, an edit with the checksums recomputed) passes every checksum, and the
// driver would load it and launch the wrong code. `status --bundle` and a
// rank's load (BundleImages) both ask here, so they never disagree.
#pragma once

#include "runtime/bundle_format.hpp"

#include <optional>
#include <string>

namespace ck {

/// Why an artifact of a bundle must not be loaded.
struct BundleArtifactFault {
    /// What is wrong: "checksum mismatch (...)", "check 'entry' failed: the
    /// cubin defines no function 'push'", "the header files entry ... under ...".
    std::string what;
    /// What to do: copy the bundle again (bytes damaged in a copy), or make
    /// it again (the header does not describe its bytes).
    std::string fix;
};

/// The first fault of `artifact` of `kernel`, both of `bundle`; nothing when
/// it may be loaded. The checks, in order: size and SHA-256, then
/// check_artifact for the recorded target and entry symbol (the kernel's
/// name when none is recorded), then that the entry symbol is the kernel's
/// (pick_entry_symbol: its name, or a mangled `_Z<length><name>...`), then
/// that the recorded key inputs, where they say, are the kernel's and the
/// target's. Reads only the bundle's bytes in memory.
std::optional<BundleArtifactFault> find_bundle_artifact_fault(const Bundle& bundle, const BundleKernel& kernel,
                                                              const BundleArtifact& artifact);

/// find_bundle_artifact_fault as an error: throws ArtifactError
/// "<file>#<kernel>@<target>: <what>; the bundle is corrupt and this artifact
/// was not loaded: <fix>" when there is a fault.
void check_bundle_artifact(const Bundle& bundle, const BundleKernel& kernel, const BundleArtifact& artifact);

}  // namespace ck
