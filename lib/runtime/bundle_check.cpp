#include "runtime/bundle_check.hpp"

#include "compilers/artifact_check.hpp"
#include "compilers/entry_symbols.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/sha256.hpp"

namespace ck {

namespace {

const char* const copy_again =
    "copy the bundle again from where it was made, or make it again (cunumpy-kernels bundle)";
const char* const make_again =
    "make the bundle again (cunumpy-kernels build, then cunumpy-kernels bundle with the same "
    "flags)";

std::string entry_of(const BundleKernel& kernel, const BundleArtifact& artifact)
{
    return artifact.entry_symbol.empty() ? kernel.name : artifact.entry_symbol;
}

// A key input the record names, or "" where it says nothing (format 1
// records of other writers, tests' hand-made headers).
std::string recorded_input(const BundleArtifact& artifact, const char* name)
{
    if (!artifact.inputs.is_object()) return {};
    auto it = artifact.inputs.find(name);
    return it != artifact.inputs.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<BundleArtifactFault> record_fault(const BundleKernel& kernel, const BundleArtifact& artifact)
{
    std::string entry = entry_of(kernel, artifact);
    if (pick_entry_symbol({entry}, kernel.name) != entry)
        return BundleArtifactFault{
            "the header files entry '" + entry + "' under kernel '" + kernel.name + "', whose entry it is not",
            make_again};
    std::string recorded_kernel = recorded_input(artifact, "kernel");
    if (!recorded_kernel.empty() && recorded_kernel != kernel.name)
        return BundleArtifactFault{"the header files kernel '" + recorded_kernel +
                                       "''s artifact (its key inputs) under "
                                       "kernel '" +
                                       kernel.name + "'",
                                   make_again};
    std::string recorded_target = recorded_input(artifact, "target");
    if (!recorded_target.empty() && recorded_target != artifact.target)
        return BundleArtifactFault{
            "the header files the artifact of " + recorded_target + " (its key inputs) under " + artifact.target,
            make_again};
    return std::nullopt;
}

}  // namespace

std::optional<BundleArtifactFault> find_bundle_artifact_fault(const Bundle& bundle, const BundleKernel& kernel,
                                                              const BundleArtifact& artifact)
{
    std::string_view bytes = bundle.artifact_bytes(artifact);
    std::string digest = sha256_hex(bytes);
    if (bytes.size() != artifact.size || digest != artifact.sha256)
        return BundleArtifactFault{"checksum mismatch (recorded sha256 " + artifact.sha256 + ", bytes " + digest + ")",
                                   copy_again};
    try {
        check_artifact(std::string(bytes),
                       {bundle.artifact_name(kernel, artifact), artifact.target, entry_of(kernel, artifact)});
    } catch (const ArtifactCheckError& error) {
        return BundleArtifactFault{"check '" + std::string(to_string(error.check())) + "' failed: " + error.finding(),
                                   make_again};
    }
    return record_fault(kernel, artifact);
}

void check_bundle_artifact(const Bundle& bundle, const BundleKernel& kernel, const BundleArtifact& artifact)
{
    if (auto fault = find_bundle_artifact_fault(bundle, kernel, artifact))
        throw ArtifactError(bundle.artifact_name(kernel, artifact) + ": " + fault->what +
                            "; the bundle is corrupt and this artifact was not loaded: " + fault->fix);
}

}  // namespace ck
