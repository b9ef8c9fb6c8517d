// Checking a compiled artifact before it is published: that cuModuleLoadData
// can load it on the GPUs of the target it is filed under, and that the
// kernel's entry is in it. The compilers accept options (-arch, -rdc=true,
// NVCC_APPEND_FLAGS) that change what they write without failing; these
// checks are the last guard, whatever slipped through. They run again
// wherever an artifact is read back without a compiler in sight: a bundle,
// by `status --bundle` and when a rank loads it (runtime/bundle_check.hpp).
#pragma once

#include "cunumpy_kernels/error.hpp"

#include <string>

namespace ck {

/// The checks, in the order they run; the first that fails is reported.
enum class ArtifactCheck {
    cuda_elf,           ///< the cubin is an ELF64 file for EM_CUDA
    complete,           ///< the file holds every byte its ELF headers describe (see elf_extent)
    executable,         ///< ELF type ET_EXEC: an ET_REL cubin (-rdc=true, -dc) needs a device link
    architecture,       ///< the SASS architecture in e_flags is the target's
    entry,              ///< the cubin defines the kernel's entry symbol
    undefined_symbols,  ///< no global symbol is undefined, but those the driver provides
    ptx_complete,       ///< every `{` of the PTX is closed: the text was not cut short
    ptx_target,         ///< the PTX's `.target` is the target's architecture
    ptx_entry,          ///< the PTX has the kernel's `.entry`
    ptx_externs,        ///< every `.extern .func` is defined in the PTX, or the driver provides it
    parameter_layout,  ///< the cubin lays out the parameters as the runtime packs them (build only: lib/struct_headers)
};

/// The check's name as messages show it ("architecture", "ptx target", ...).
const char* to_string(ArtifactCheck check);

/// An artifact failed a check. what() names the artifact, the target, the
/// check, what was found, and what to do about it after a compile.
class ArtifactCheckError : public ArtifactError {
public:
    ArtifactCheckError(ArtifactCheck check, const std::string& finding, const std::string& message)
        : ArtifactError(message), check_(check), finding_(finding)
    {
    }
    ArtifactCheck check() const { return check_; }
    /// What was found, without the artifact's name or advice: "the cubin is
    /// for sm_80 (ELF e_flags ...), not sm_90". Readers that are not a
    /// compile (a bundle) give their own advice.
    const std::string& finding() const { return finding_; }

private:
    ArtifactCheck check_;
    std::string finding_;
};

/// What an artifact must be.
struct ArtifactExpectation {
    std::string name;          ///< names it in messages: "push.sm_90.cubin of src/push/push_cuda.cu"
    std::string target;        ///< `sm_90`, `sm_90a` (cubin) or `compute_90` (PTX)
    std::string entry_symbol;  ///< the kernel's lowered name, as the compiler reported it
};

/// Checks a cubin: an ELF64 file for EM_CUDA, whole (elf_extent), of type ET_EXEC, whose
/// architecture (see cuda_elf_sm) is the target's number, marked
/// architecture-specific only for an `a` target, that defines
/// `entry_symbol` as a function and leaves no global symbol undefined but
/// the functions the driver supplies (vprintf, malloc, free, __assertfail).
/// Throws ArtifactCheckError at the first check that fails.
void check_cubin(const std::string& cubin, const ArtifactExpectation& expected);

/// Checks a PTX text: its braces balance (a text cut short leaves a body
/// open), its `.target` directive's first field is `sm_<N>` for
/// target `compute_<N>` (`, debug` and other fields after it are allowed),
/// it has `.entry <entry_symbol>`, and every `.extern .func` is defined in
/// the same text or supplied by the driver (PTX ISA: a module the driver JIT
/// compiles alone is linked with nothing else). Comments are ignored.
/// Throws ArtifactCheckError at the first check that fails.
void check_ptx(const std::string& ptx, const ArtifactExpectation& expected);

/// check_ptx for a `compute_*` target, check_cubin otherwise.
void check_artifact(const std::string& bytes, const ArtifactExpectation& expected);

}  // namespace ck
