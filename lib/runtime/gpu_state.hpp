// Gpu's per-process state: the driver (loaded and initialised once), the
// devices' limits, and which device each context belongs to.
#pragma once

#include "cunumpy_kernels/gpu.hpp"

#include "runtime/cuda_driver.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace ck {

/// One device as the runtime uses it.
struct DeviceState {
    CUdevice device = 0;
    DeviceInfo info;
    CUcontext primary = nullptr;  ///< retained primary context, when this process retained it
};

/// The calling thread's context and its device.
struct CurrentContext {
    CUcontext context = nullptr;
    const DeviceState* device = nullptr;
};

// Hidden although Gpu is exported: internal to the library.
struct [[gnu::visibility("hidden")]] Gpu::State
{
    /// Set for a test's fake; for the system Gpu loaded at the first need.
    std::shared_ptr<CudaDriver> driver;
    bool load_from_system = false;
    std::once_flag load_once;
    std::string load_error;  ///< why the driver is unusable; empty when it works

    std::shared_mutex mutex;  ///< guards the maps below
    std::map<CUdevice, std::unique_ptr<DeviceState>> devices;
    std::map<CUcontext, const DeviceState*> contexts;
    // The first context seen, answered without a lock (set once).
    std::atomic<CUcontext> first_context{nullptr};
    std::atomic<const DeviceState*> first_device{nullptr};

    ~State();

    /// The initialised driver. Throws CudaError naming why it is unusable.
    CudaDriver& ready_driver()
    {
        if (ready.load(std::memory_order_acquire)) [[likely]]
            return *driver;
        return load_driver();
    }

    /// The context current on this thread, making device 0's primary context
    /// current when there is none. Throws CudaError. Inline for the launch
    /// path: the first context seen is answered without a lock or a call.
    CurrentContext current_context()
    {
        CudaDriver& d = ready_driver();
        CUcontext context = nullptr;
        check_cuda(d, d.context_get_current(&context), "cuCtxGetCurrent");
        if (const DeviceState* first = first_device.load(std::memory_order_acquire);
            first && context && first_context.load(std::memory_order_relaxed) == context) [[likely]]
            return {context, first};
        return other_context(context);
    }

private:
    CudaDriver& load_driver();
    CurrentContext other_context(CUcontext context);  ///< current_context() past the first context
    void load();
    const DeviceState& device_state(CUdevice device);
    const DeviceState& device_of_context(CUcontext context);
    void remember_first(CUcontext context, const DeviceState& state);  ///< called with `mutex` held

    std::atomic<bool> ready{false};  ///< loaded without error: ready_driver() asks no once_flag
};

/// The library's access to a Gpu's internals (a friend of Gpu), so that the
/// public class names no internal type.
struct GpuAccess {
    /// A Gpu over `driver` (a test's fake); the driver is initialised lazily.
    static std::shared_ptr<Gpu> over(std::shared_ptr<CudaDriver> driver);
    static Gpu::State& state(const Gpu& gpu) { return *gpu.state_; }
    /// The driver, loaded and initialised. Throws CudaError.
    static CudaDriver& driver(const Gpu& gpu) { return gpu.state_->ready_driver(); }
};

/// Reads a device's name, compute capability and launch limits.
DeviceInfo read_device_info(CudaDriver& driver, CUdevice device, int ordinal);

}  // namespace ck
