// Backend and implementation selection, as the cunumpy kernels guide defines
// it: the three process-wide choices below are the only global settings a
// caller makes. (The library's other process-wide state holds no choice: the
// driver and contexts behind Gpu::system(), the registry of compiler scratch
// folders a signal handler removes, the counter in temporary names.) They are
// not per thread (like cunumpy's); reading them is
// thread-safe, changing them while other threads call kernels is allowed but
// each call sees the old or the new choice.
//
// Each is read from its environment variable once, at the first use of any
// function here or of a kernel call, with cunumpy's exact rules:
//   CUNUMPY_BACKEND                       "cupy" (lower-cased, not stripped) selects
//                                         Backend::cuda when CUDA works, else host;
//                                         any other value selects host.
//   CUNUMPY_HOST_KERNEL_IMPLEMENTATION    stripped, lower-cased; empty: automatic;
//                                         else one of pyccel, numba, numpy, python.
//   CUNUMPY_DEVICE_KERNEL_IMPLEMENTATION  stripped, lower-cased; empty: automatic;
//                                         else "cuda".
// An unsupported implementation value makes that first use throw UsageError
// (cunumpy's import fails), and every later one until it is fixed.
#pragma once

#include "cunumpy_kernels/export.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace ck {

/// The array backend: host (cunumpy's "numpy") or cuda (cunumpy's "cupy").
/// Kernels with `dispatch` = backend run the host kernel on host and the
/// CUDA kernel on cuda.
enum class Backend { host, cuda };

/// "numpy" or "cupy": the names of the environment variable and the guide.
CK_API const char* to_string(Backend backend);

/// Selects the backend. Backend::cuda falls back to host silently when no
/// CUDA device works (read get_backend() to see the effect), unless `strict`:
/// then it throws CudaError with the reason and keeps the current backend.
CK_API void set_backend(Backend backend, bool strict = false);

/// The effective backend, after any fallback.
CK_API Backend get_backend();

/// Selects a backend for a scope and restores the previous one on exit, also
/// when the scope throws (cunumpy's use_backend).
class CK_API BackendGuard {
public:
    explicit BackendGuard(Backend backend, bool strict = false);
    ~BackendGuard();
    BackendGuard(const BackendGuard&) = delete;
    BackendGuard& operator=(const BackendGuard&) = delete;

private:
    Backend previous_;
};

/// The host implementations a kernel can have, in cunumpy's default order of
/// preference ("python", the uncompiled version, last and with a warning).
inline constexpr std::array<std::string_view, 4> host_implementation_names = {"pyccel", "numba", "numpy", "python"};

/// Chooses the host implementation every kernel with named implementations
/// runs; nullopt restores the automatic choice. A kernel lacking the chosen
/// one throws ImplementationError instead of running another. Throws
/// UsageError for a name not in host_implementation_names, keeping the
/// previous choice.
CK_API void set_host_kernel_implementation(std::optional<std::string> name);

/// The requested host implementation; nullopt in automatic mode.
CK_API std::optional<std::string> get_host_kernel_implementation();

/// Chooses a host implementation for a scope, restoring the previous choice.
class CK_API HostImplementationGuard {
public:
    explicit HostImplementationGuard(std::optional<std::string> name);
    ~HostImplementationGuard();
    HostImplementationGuard(const HostImplementationGuard&) = delete;
    HostImplementationGuard& operator=(const HostImplementationGuard&) = delete;

private:
    std::optional<std::string> previous_;
};

/// Requires the CUDA implementation for device calls ("cuda"), or restores
/// the automatic choice (nullopt), which keeps each kernel's missing_cuda
/// policy. With "cuda", a kernel without CUDA kernel throws
/// ImplementationError, even with missing_cuda = fallback. Throws UsageError
/// for any other name, keeping the previous choice.
CK_API void set_device_kernel_implementation(std::optional<std::string> name);

/// The requested device implementation: nullopt in automatic mode, even when
/// calls use CUDA.
CK_API std::optional<std::string> get_device_kernel_implementation();

/// Chooses the device implementation for a scope, restoring the previous one.
class CK_API DeviceImplementationGuard {
public:
    explicit DeviceImplementationGuard(std::optional<std::string> name);
    ~DeviceImplementationGuard();
    DeviceImplementationGuard(const DeviceImplementationGuard&) = delete;
    DeviceImplementationGuard& operator=(const DeviceImplementationGuard&) = delete;

private:
    std::optional<std::string> previous_;
};

}  // namespace ck
