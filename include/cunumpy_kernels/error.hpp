// Errors raised at the library surface.
//
// Every error carries a message a user can act on: what failed, on which file,
// kernel or cache path, and why. The CLI maps the types to exit codes in one
// place (run_cli in tools/cli.cpp): UsageError -> 2, TransientReadError -> 75,
// everything else -> 1.
#pragma once

#include "cunumpy_kernels/export.hpp"

#include <stdexcept>
#include <string>

namespace ck {

/// Base of every error the library throws, and the only kind of exception
/// that leaves it (any other failure inside reaches the caller as an Error
/// saying "internal error").
class CK_API Error : public std::runtime_error {
public:
    /// what() is `message` with every byte outside well-formed UTF-8 written
    /// as \xNN (a path in a Latin-1 folder reads ".../caf\xe9/..."), so the
    /// message can be printed and logged as UTF-8 text.
    explicit Error(const std::string& message);
};

/// The caller asked for something malformed: an unknown option, a wrong value
/// type in `pyproject.toml`, a path that does not exist. Fix the invocation.
class CK_API UsageError : public Error {
public:
    using Error::Error;
};

/// A configuration file is invalid. The message names the file and the key
/// (and line where the parser knows it). A kind of UsageError.
class CK_API ConfigError : public UsageError {
public:
    using UsageError::UsageError;
};

/// A source file (kernel, header, module) could not be read or parsed.
class CK_API SourceError : public Error {
public:
    using Error::Error;
};

/// The cache could not be read or written: no writable root, a failed rename,
/// a corrupt manifest. Entries already published are never touched by a
/// failure.
class CK_API CacheError : public Error {
public:
    using Error::Error;
};

/// A compiler could not be found, loaded or started (not: a kernel that does
/// not compile, which is reported per kernel with the compiler's log).
class CK_API ToolchainError : public Error {
public:
    using Error::Error;
};

/// The CUDA driver is missing or failed: no `libcuda.so.1`, no device, or a
/// driver call that returned an error (the message holds its name and text).
class CK_API CudaError : public Error {
public:
    using Error::Error;
};

/// A kernel call's arguments do not fit the kernel: count, array versus
/// scalar, element type, integer range, struct size. The message names the
/// kernel, the argument's position and name, and what was expected.
class CK_API ArgumentError : public UsageError {
public:
    using UsageError::UsageError;
};

/// A launch exceeds the device's or the kernel's limits (block, grid, shared
/// memory), or its size cannot be worked out from the call.
class CK_API LaunchError : public UsageError {
public:
    using UsageError::UsageError;
};

/// A call needs a kernel that does not exist: a CUDA kernel not written yet
/// with `missing_cuda` = raise, or a host kernel never attached.
class CK_API MissingKernelError : public Error {
public:
    using Error::Error;
};

/// An explicitly selected implementation (host or device) is missing; the
/// runtime never runs another one instead.
class CK_API ImplementationError : public Error {
public:
    using Error::Error;
};

/// No artifact of the cache fits the device and none could be built; the
/// message names the device, its architecture and what the cache holds. Also
/// a bundle that cannot be read, is corrupt or of another format version
/// (KernelCatalog::from_bundle), and a missing artifact when one is bundled.
class CK_API ArtifactError : public Error {
public:
    using Error::Error;
};

/// A read that failed for now and may succeed if tried again later: a file
/// on a network file system (NFS, Lustre, GPFS) kept answering "Stale file
/// handle" (ESTALE) while another node replaced or removed it, after a few
/// tries over about a tenth of a second. Nothing is wrong with the file or the
/// cache; run the command again. The CLI exits with 75 (EX_TEMPFAIL).
class CK_API TransientReadError : public Error {
public:
    using Error::Error;
};

/// Host and CUDA kernels take different parameters (check_signatures).
class CK_API SignatureError : public Error {
public:
    using Error::Error;
};

}  // namespace ck
