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

/// Throws LaunchError, prefixed with `context` ("kernel 'push' on CUDA device
/// 0 (NVIDIA H200)"), when the launch cannot run on the device.
void check_launch_limits(const LaunchShape& shape, std::size_t shared_mem, const DeviceInfo& device,
                         const FunctionLimits& function, const std::string& context);

}  // namespace ck
