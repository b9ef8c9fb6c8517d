// The checks before a launch (cunumpy's _validate_launch): block and grid
// against the device's limits and the kernel's own maximum (which reflects
// __launch_bounds__ and register use), shared memory against the device's
// limit with the opt-in above the default.
#pragma once

#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/launch.hpp"

#include <string>

namespace ck {

/// What the driver reports of one loaded kernel.
struct FunctionLimits {
    int max_threads_per_block = 0;  ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    int static_shared = 0;          ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
};

/// Whether the launch can run on the device: block and grid per axis, the
/// block's threads against the device's and the kernel's maximum, static
/// plus dynamic shared memory against the device's opt-in limit. Inline: the
/// launch path asks it at every call.
inline bool launch_fits(const LaunchShape& shape, std::size_t shared_mem, const DeviceInfo& device,
                        const FunctionLimits& function)
{
    for (int axis = 0; axis < 3; ++axis)
        if (shape.block[axis] > device.max_block[axis] || shape.grid[axis] > device.max_grid[axis]) return false;
    int threads_limit = device.max_threads_per_block;
    if (function.max_threads_per_block > 0 && function.max_threads_per_block < threads_limit)
        threads_limit = function.max_threads_per_block;
    if (shape.block.product() > threads_limit) return false;
    int shared_limit = device.shared_per_block > device.shared_per_block_optin ? device.shared_per_block
                                                                               : device.shared_per_block_optin;
    std::size_t static_shared = function.static_shared > 0 ? static_cast<std::size_t>(function.static_shared) : 0;
    return shared_mem + static_shared <= static_cast<std::size_t>(shared_limit);
}

/// Throws LaunchError, prefixed with `context` ("kernel 'push' on CUDA device
/// 0 (NVIDIA H200)"), naming the first limit the launch passes.
[[noreturn]] void throw_launch_limits(const LaunchShape& shape, std::size_t shared_mem, const DeviceInfo& device,
                                      const FunctionLimits& function, const std::string& context);

/// Throws as throw_launch_limits when the launch cannot run on the device.
inline void check_launch_limits(const LaunchShape& shape, std::size_t shared_mem, const DeviceInfo& device,
                                const FunctionLimits& function, const std::string& context)
{
    if (!launch_fits(shape, shared_mem, device, function)) [[unlikely]]
        throw_launch_limits(shape, shared_mem, device, function, context);
}

}  // namespace ck
