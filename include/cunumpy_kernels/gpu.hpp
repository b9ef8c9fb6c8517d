// The CUDA driver and the devices a process uses.
//
// libcuda.so.1 is loaded with dlopen at the first need and its entry points
// resolved through cuGetProcAddress, so a program linking this library starts
// and runs host kernels on a machine without a driver; "no CUDA driver" is
// reported only when something needs CUDA. The runtime never starts a process.
//
// Contexts: a call uses the context current on the calling thread; when none
// is current it retains the primary context of device 0 (the one the CUDA
// runtime API and CuPy use) and makes it current on that thread.
//
// Thread safety: every member function may be called from several threads.
#pragma once

#include "cunumpy_kernels/arguments.hpp"
#include "cunumpy_kernels/export.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ck {

class DeviceBuffer;

/// What the runtime knows of one device: identity and the launch limits it
/// checks before every launch.
struct DeviceInfo {
    int ordinal = 0;
    std::string name;  ///< "NVIDIA H200"
    int cc_major = 0;  ///< compute capability, e.g. 9
    int cc_minor = 0;  ///< e.g. 0
    int max_threads_per_block = 0;
    int max_block[3] = {0, 0, 0};    ///< per axis
    int max_grid[3] = {0, 0, 0};     ///< per axis
    int shared_per_block = 0;        ///< bytes a block may use without opting in
    int shared_per_block_optin = 0;  ///< bytes a block may use after cuFuncSetAttribute

    /// "sm_90".
    std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

/// The driver and per-device state of the process. Obtain the process's own
/// with Gpu::system(); tests build one over a fake driver.
class CK_API Gpu : public std::enable_shared_from_this<Gpu> {
public:
    /// The process's GPU access over the real driver, created at the first
    /// call; nothing is loaded until a member function needs the driver.
    /// Never destroyed: modules and contexts stay valid until exit, and no
    /// driver call runs from a static destructor.
    static std::shared_ptr<Gpu> system();

    ~Gpu();
    Gpu(const Gpu&) = delete;
    Gpu& operator=(const Gpu&) = delete;

    /// Whether CUDA works here: a driver, cuInit succeeding and a device. On
    /// false, `why` (when given) says what is missing. Never throws.
    bool available(std::string* why = nullptr) const;

    /// The device of the calling thread's context (see the contexts note
    /// above). Throws CudaError "no CUDA driver ..." or the driver's error.
    DeviceInfo current_device() const;

    /// Waits for all work of the current context. Throws CudaError.
    void synchronize() const;

    /// Allocates `bytes` of device memory in the current context.
    /// Throws CudaError (out of memory, no driver).
    DeviceBuffer allocate(std::size_t bytes) const;

    /// Copies between host and device memory (synchronous). Throw CudaError.
    void copy_to_device(std::uint64_t device_address, const void* host, std::size_t bytes) const;
    void copy_to_host(void* host, std::uint64_t device_address, std::size_t bytes) const;

    /// The library's per-process state (driver, contexts, device limits);
    /// opaque outside the library.
    struct State;

private:
    // Internal to the library: its access to the driver and state, and to a
    // Gpu over a test's fake driver. Not part of the API.
    friend struct GpuAccess;
    [[gnu::visibility("hidden")]] explicit Gpu(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

/// Device memory owned by the caller; freed on destruction (RAII).
class CK_API DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(std::shared_ptr<const Gpu> gpu, std::uint64_t address, std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    /// The device address (0 for an empty buffer) and the size in bytes.
    std::uint64_t address() const { return address_; }
    std::size_t bytes() const { return bytes_; }

    /// Copies `bytes` from host memory to the start of the buffer. Throws
    /// UsageError when it does not fit, CudaError on driver failure.
    void upload(const void* host, std::size_t bytes);
    /// Copies `bytes` from the start of the buffer to host memory.
    void download(void* host, std::size_t bytes) const;

    /// A C-ordered device view of the buffer as elements of T. Throws
    /// ArgumentError when the shape needs more bytes than the buffer has.
    template <typename T>
    ArrayView view(std::initializer_list<std::int64_t> shape) const
    {
        return checked_view(element_type_of<T>(), std::span<const std::int64_t>(shape.begin(), shape.size()));
    }
    /// view<T>() with the element type given at run time; same errors.
    ArrayView checked_view(ElementType type, std::span<const std::int64_t> shape) const;

private:
    void release() noexcept;
    std::shared_ptr<const Gpu> gpu_;
    std::uint64_t address_ = 0;
    std::size_t bytes_ = 0;
};

}  // namespace ck
