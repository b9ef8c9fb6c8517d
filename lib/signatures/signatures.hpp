// Reading kernel declarations from sources and checking that every
// implementation of a kernel takes the same parameters, in the same order.
//
// The rule is cunumpy's (Kernel.check_signature and
// KernelCatalog.check_signatures, "Same parameters on both sides" in the
// cunumpy kernels guide): the positional parameter names of the host function
// `<name>` must equal the parameter names of `__global__ void <name>(...)`,
// and every other host implementation (from_folder's numba and NumPy
// versions) and the Pyccel stub `__pyccel__/<module>.pyi` must take the host
// function's names. Nothing is compiled, imported or run: the readers work on
// source text, so a pre-commit hook or CI job needs no compiler, GPU or Python.
#pragma once

#include "source/source_record.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "cunumpy_kernels/signature_read.hpp"
#include "source/project_headers.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ck {

/// One declaration of a kernel, as read.
struct Signature {
    std::string role;            ///< "host kernel", "CUDA kernel", "numba version", "numpy version",
                                 ///< "pyccel version", "Pyccel stub"
    std::filesystem::path file;  ///< the source it was read from
    SignatureRead read;
};

/// One problem of one kernel.
struct SignatureFinding {
    enum class Kind {
        mismatch,            ///< two declarations take different names
        unreadable,          ///< a declaration is missing or cannot be read
        unreadable_file,     ///< a source file cannot be read at all (permissions, a folder)
        cunumpy_unreadable,  ///< warning: cunumpy's own reader cannot read the CUDA declaration
        cunumpy_mismatch,    ///< warning: cunumpy's reader reads another declaration, with other names
        conditional,         ///< warning: the function is bound differently in branches of an `if`/`try`
    };
    /// Errors fail the check; warnings are reported and fail it only when
    /// asked (`--warnings-as-errors`). The cunumpy kinds are warnings: the
    /// declarations agree, but a program loading them with cunumpy fails.
    enum class Severity { error, warning };
    Kind kind = Kind::mismatch;
    Severity severity = Severity::error;
    /// cunumpy's wording: "kernel 'push': the host kernel takes (x, v, dt, n),
    /// the CUDA kernel (x, v, n, dt)"; for the others "kernel 'push': cannot
    /// read the CUDA kernel: <reason>".
    std::string message;
    /// mismatch: the host kernel's, then the other; otherwise the one concerned.
    std::vector<Signature> declarations;
};

/// How a kernel's declarations compare.
enum class SignatureAgreement {
    nothing_to_compare,  ///< only a host kernel: no CUDA kernel, stub or other version
    match,               ///< every declaration takes the host kernel's names
    mismatch,            ///< some take other names
    unreadable,          ///< some could not be read (and none differ among those read)
};

/// "-", "match", "mismatch" or "unreadable", as `status` and the JSON reports write it.
const char* to_string(SignatureAgreement agreement);

/// The declarations of one kernel and their problems.
struct KernelSignatures {
    std::string module;                      ///< KernelSource::module
    std::string name;                        ///< KernelSource::name
    std::vector<Signature> declarations;     ///< the host kernel's first, in the order compared
    std::vector<SignatureFinding> findings;  ///< every problem, not just the first

    /// mismatch when any finding is one, else unreadable when any declaration
    /// could not be read, else match, or nothing_to_compare for a host kernel
    /// alone. Warnings do not change it.
    SignatureAgreement agreement() const;
};

/// cunumpy's version as the program's Python would load it, asked only when
/// a cunumpy finding is worded; "" when unknown (the messages then name
/// signatures::cunumpy_reference_version, the release the model follows).
using CunumpyVersion = std::function<std::string()>;

/// Reads and compares the declarations of `kernel`: the host kernel is its
/// first host implementation (cunumpy's order: pyccel, numba, numpy); the
/// CUDA kernel, the other host files, and the stub of each Pyccel module are
/// compared with it. A kernel with nothing but a host module is not read.
/// A CUDA declaration that reads well is also read as cunumpy's own reader
/// reads it (cunumpy_readability.hpp, with `template-args` of `config`): a
/// warning when cunumpy cannot read it or reads other names. Never throws:
/// unreadable files are findings. `headers`, when given, serves the project
/// headers other kernels' readings read already (a check of many kernels);
/// `record`, when given, the readings of Python files unchanged since it
/// remembered them (source/source_record.hpp).
KernelSignatures check_kernel_signatures(const KernelSource& kernel, const Config& config,
                                         const CunumpyVersion& cunumpy_version = {},
                                         signatures::HeaderCache* headers = nullptr, SourceRecord* record = nullptr);

/// check_kernel_signatures of each of `kernels`, in their order, read on this
/// thread and one more when there are several: the readings are independent,
/// and the pre-commit hook and `status` wait for all of them. `headers` and
/// `record` are shared by both threads (they lock); `cunumpy_version` may be
/// called from either, so it must be safe to call concurrently. Where no
/// thread can be started, this thread reads them all. Never throws but for
/// lack of memory.
std::vector<KernelSignatures> check_signatures(const std::vector<KernelSource>& kernels, const Config& config,
                                               const CunumpyVersion& cunumpy_version = {},
                                               signatures::HeaderCache* headers = nullptr,
                                               SourceRecord* record = nullptr);

}  // namespace ck
