// A kernel: a host kernel and, once it is written, its CUDA port under one
// name; a call runs the one that the backend or the arguments select (the
// cunumpy kernels guide's `Kernel`).
//
// Host kernels are C++ callables the application attaches by name, or, where
// it attaches none, the kernel's Pyccel version from the host library
// `cunumpy-kernels build` caches (doc/host-libraries.md). CUDA
// kernels come from the cache that `cunumpy-kernels build` fills, are built
// with NVRTC on a miss, and are loaded through the CUDA driver.
//
// Thread safety: a Kernel may be called from several threads at once. The
// CUDA module is loaded once per device context and shared by all threads;
// the first call in a context loads it while other callers wait. Attaching
// host kernels and changing launch defaults must not race with calls.
#pragma once

#include "cunumpy_kernels/arguments.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/export.hpp"
#include "cunumpy_kernels/launch.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ck {

class Gpu;

/// A host kernel: a callable taking the call's arguments as they are.
class CK_API HostKernel {
public:
    using Function = std::function<void(std::span<const Argument>)>;

    HostKernel() = default;
    /// `arity` is the parameter count when known (-1: any).
    explicit HostKernel(Function function, int arity = -1) : function_(std::move(function)), arity_(arity) {}

    void operator()(std::span<const Argument> args) const { function_(args); }
    explicit operator bool() const { return static_cast<bool>(function_); }
    int arity() const { return arity_; }

private:
    Function function_;
    int arity_ = -1;
};

namespace detail {

[[noreturn]] CK_API void throw_argument_count(std::size_t expected, std::size_t got);
/// Checks that argument `index` is a host array of `type`; returns its data.
CK_API void* host_array_data(const Argument& argument, std::size_t index, ElementType type, bool need_contiguous);
/// Checks that argument `index` is a struct of `size` bytes; returns its data.
CK_API const void* struct_data(const Argument& argument, std::size_t index, std::size_t size);

template <typename P>
decltype(auto) host_parameter(const Argument& argument, std::size_t index)
{
    using T = std::remove_cvref_t<P>;
    if constexpr (std::is_pointer_v<T>) {
        using E = std::remove_pointer_t<T>;
        return static_cast<T>(host_array_data(argument, index, element_type_of<std::remove_cv_t<E>>(), true));
    } else if constexpr (std::is_same_v<T, ArrayView>) {
        host_array_data(argument, index, argument.type(), false);
        return argument.array();
    } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
        T value{};
        convert_scalar(argument, element_type_of<T>(), &value, "argument " + std::to_string(index));
        return value;
    } else {
        static_assert(std::is_trivially_copyable_v<T>,
                      "host kernel parameters: pointers, ArrayView, scalars, or trivially copyable structs");
        return *static_cast<const T*>(struct_data(argument, index, sizeof(T)));
    }
}

template <typename... P, std::size_t... I>
void call_unpacked(void (*function)(P...), std::span<const Argument> args, std::index_sequence<I...>)
{
    function(host_parameter<P>(args[I], I)...);
}

}  // namespace detail

/// Wraps a typed host function, e.g. `void push(double* x, double* v, const
/// double* e, double dt, double length, long long n)`: each call checks the
/// argument count, that pointer parameters get contiguous host arrays of
/// their element type, converts scalars as cunumpy does, and passes structs
/// of matching size. Throws ArgumentError naming the argument's position.
template <typename... P>
HostKernel host_kernel(void (*function)(P...))
{
    return HostKernel(
        [function](std::span<const Argument> args) {
            if (args.size() != sizeof...(P)) detail::throw_argument_count(sizeof...(P), args.size());
            detail::call_unpacked(function, args, std::index_sequence_for<P...>{});
        },
        static_cast<int>(sizeof...(P)));
}

/// Wraps a callable that takes the arguments as they are.
inline HostKernel host_kernel(HostKernel::Function function) { return HostKernel(std::move(function)); }

/// Behaviour on device arguments without a CUDA kernel (cunumpy's missing_cuda).
enum class MissingCuda {
    raise,     ///< throw MissingKernelError naming where the CUDA kernel is expected
    fallback,  ///< copy device arrays to the host, run the host kernel, copy back; warn once
};

/// How a call chooses between host and CUDA kernel (cunumpy's dispatch).
enum class Dispatch {
    backend,  ///< CUDA on Backend::cuda, host on Backend::host
    arrays,   ///< CUDA when any argument is a device array, else host
};

/// Receives the runtime's warnings (a fallback to the host kernel, the
/// uncompiled "python" version running), one message at a time, without a
/// trailing newline, bytes that are not UTF-8 (a path in a Latin-1 folder)
/// written as \xNN; it may be called from any thread that calls the kernel.
/// Empty (the default): write_warning_line. An MPI application may route
/// them to its own log, or keep rank 0's only.
using WarningSink = std::function<void(const std::string& message)>;

/// The default warning sink: writes "cunumpy-kernels: warning: <message>"
/// as one line to stderr, in one write so that lines of concurrent callers
/// do not interleave. Never throws.
CK_API void write_warning_line(const std::string& message);

/// Per-kernel options (cunumpy's Kernel and CudaKernel keyword arguments).
struct KernelOptions {
    MissingCuda missing_cuda = MissingCuda::raise;
    Dispatch dispatch = Dispatch::backend;
    Dim3 block_size{default_block_size};  ///< threads per block when a call gives none; at most 1024
    NThreadsFrom n_threads_from = NThreadsFrom::automatic();
    /// Fallback: the argument positions the host kernel writes, copied back
    /// to the device after the call; nullopt copies back every device array.
    std::optional<std::vector<int>> outputs;
    WarningSink warn;
};

/// How the CUDA kernels are found, built and loaded.
struct LoadOptions {
    /// The tree's options; nullopt reads the nearest pyproject.toml as the CLI
    /// does (load_config), so the runtime computes the keys `build` computed.
    std::optional<Config> config;
    /// The GPU access; nullptr uses Gpu::system().
    std::shared_ptr<Gpu> gpu;
    /// Never publish NVRTC builds into the cache; keep them in memory. A
    /// cache that cannot be written is treated so without this flag too.
    bool read_only_cache = false;
};

/// Fallback copies and calls, counted per kernel so that a test can assert
/// that a time loop made none (cunumpy's count_transfers).
struct CK_API TransferCounts {
    std::uint64_t fallbacks = 0;  ///< calls that ran the host kernel for device arguments
    std::uint64_t to_host = 0;    ///< device-to-host copies
    std::uint64_t to_host_bytes = 0;
    std::uint64_t to_device = 0;  ///< host-to-device copies
    std::uint64_t to_device_bytes = 0;

    bool none() const { return fallbacks == 0 && to_host == 0 && to_device == 0; }
    TransferCounts& operator+=(const TransferCounts& other);
    bool operator==(const TransferCounts&) const = default;
};

/// How a kernel's CUDA module was found for a device.
struct CudaLoadInfo {
    std::string how;  ///< "cubin", "compatible cubin", "ptx" (driver JIT) or "nvrtc" (built now); from a bundle "bundle
                      ///< cubin", "bundle compatible cubin", "bundle ptx"
    std::string target;  ///< the artifact's target: sm_90, compute_90, ...
    std::string key;     ///< its cache key
    std::filesystem::path
        artifact;            ///< its file; empty when kept in memory; from a bundle "<bundle file>#<kernel>@<target>"
    bool published = false;  ///< an NVRTC build written into the cache now
    std::string device;      ///< "NVIDIA H200 (sm_90)"
    double seconds = 0;      ///< lookup, checksum, build and module load
};

/// A host kernel and an optional CUDA kernel under one name.
class CK_API Kernel {
public:
    /// A kernel with no CUDA version and no host kernel attached yet.
    explicit Kernel(std::string name, KernelOptions options = {});

    /// The kernel of one kernel folder (`<name>/<name>_kernels.py` and maybe
    /// `<name>_cuda.cu`), found by the walking rules of the CLI. When `build`
    /// made a host library of its current Pyccel module (either backend; in
    /// the cache or in place), that is its "pyccel" implementation until the
    /// application attaches a host kernel; a library that cannot serve it (a
    /// parameter such as a Pyccel class instance, a damaged or truncated
    /// file) is named in a warning. Throws
    /// UsageError when `folder` is not exactly one kernel, ConfigError for a
    /// bad pyproject.toml, SourceError when the CUDA source cannot be read.
    static Kernel from_folder(const std::filesystem::path& folder, KernelOptions options = {}, LoadOptions load = {});

    Kernel(Kernel&&) noexcept;
    Kernel& operator=(Kernel&&) noexcept;
    ~Kernel();

    /// The kernel's name (its folder's name); whether it has a CUDA kernel.
    const std::string& name() const;
    bool has_cuda() const;
    /// Where the CUDA kernel is or is expected (`<folder>/<name>_cuda.cu`);
    /// empty for a kernel built by hand.
    const std::filesystem::path& cuda_path() const;
    /// The options the kernel was made with.
    const KernelOptions& options() const;
    /// Launch defaults for later calls (cunumpy's settable n_threads_from and
    /// block_size); a bad block size is reported at the next CUDA call.
    void set_n_threads_from(NThreadsFrom n_threads_from);
    void set_block_size(Dim3 block_size);

    /// Attaches the host kernel (cunumpy's plain host function: no
    /// implementation choice applies). Throws UsageError when named
    /// implementations are attached already.
    void attach_host(HostKernel host);
    /// Attaches host implementation `implementation` (pyccel, numba, numpy or
    /// python); the host implementation selection then applies. Throws
    /// UsageError for another name or when a plain host kernel is attached.
    void attach_host(const std::string& implementation, HostKernel host);

    /// "host" or the attached implementation names in preference order, else
    /// "pyccel" for the cached Pyccel version, then "cuda" when there is a
    /// CUDA kernel.
    std::vector<std::string> implementations() const;

    /// The implementation a call runs now: for host arguments the selected
    /// host implementation (or "host"); with `device`, "cuda" or "host" (the
    /// fallback). Throws as a call would: ImplementationError,
    /// MissingKernelError.
    std::string selected(bool device = false) const;

    /// Calls the host or the CUDA kernel, as `dispatch` chooses.
    ///
    /// Host: the host kernel gets the arguments as they are; the launch
    /// options are ignored. The cached Pyccel version takes host arrays as
    /// views (no copy) after checking each one's element type, rank, that it
    /// is not empty, and for rank 2 and more its order, as Pyccel's Python
    /// wrapper does, and converts scalars as convert_scalar does: an
    /// ArgumentError names the argument. CUDA: the arguments are checked against the
    /// parsed `__global__` signature (count, array versus scalar, element
    /// type, integer range, struct size as the driver reports it), the launch
    /// against the device and kernel limits, then the kernel is launched
    /// asynchronously on `launch.stream`. An empty grid launches nothing.
    ///
    /// Throws ArgumentError, LaunchError, MissingKernelError (no CUDA kernel
    /// and missing_cuda = raise, or no host kernel attached),
    /// ImplementationError (an explicitly selected implementation missing),
    /// CudaError (no driver, a failed launch), ArtifactError (nothing in the
    /// cache fits the device and NVRTC failed), ToolchainError (no NVRTC).
    void call(std::span<const Argument> args, const Launch& launch = {});

    /// `kernel(x, v, 0.1, n)`: each argument converted to an Argument.
    template <typename... A>
    void operator()(const A&... args)
    {
        std::array<Argument, sizeof...(A)> list{Argument(args)...};
        call(list, Launch{});
    }

    /// `kernel(Launch{.n_threads = n}, x, v, 0.1, n)`.
    template <typename... A>
    void operator()(const Launch& launch, const A&... args)
    {
        std::array<Argument, sizeof...(A)> list{Argument(args)...};
        call(list, launch);
    }

    /// Loads the CUDA kernel for the current device now (building it on a
    /// miss), so that a missing or broken kernel surfaces at setup. Returns
    /// false when there is no CUDA kernel. Throws as a CUDA call would.
    bool compile();

    /// How the CUDA module of the current context was loaded; nullopt before
    /// the first load or without CUDA kernel.
    std::optional<CudaLoadInfo> load_info() const;

    /// The parameter names of the `__global__` signature. Throws SourceError
    /// when it cannot be read; empty without CUDA kernel.
    std::vector<std::string> cuda_parameters() const;

    /// The parameter names of the Python host kernel (`<name>_kernels.py`),
    /// when the kernel came from a folder and its `def` can be read; nullopt
    /// otherwise. Read by the reader `cunumpy-kernels check-signatures` uses
    /// (read_python_signature in signature_read.hpp).
    std::optional<std::vector<std::string>> host_parameters() const;

    /// cunumpy's check_signature for this kernel, by the same implementation
    /// as `cunumpy-kernels check-signatures`: one message per declaration
    /// (CUDA kernel, other host versions, Pyccel stub) whose parameter names
    /// differ from the host kernel's. Empty for a kernel built by hand.
    std::vector<std::string> signature_mismatches() const;

    /// The fallback counts of this kernel so far.
    TransferCounts transfers() const;

    /// The library's state of a kernel; opaque outside the library.
    struct State;

private:
    // Internal to the library: it builds kernels over prepared state. Not part of the API.
    friend struct KernelFactory;
    [[gnu::visibility("hidden")]] explicit Kernel(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace ck
