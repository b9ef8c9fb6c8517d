#include "runtime/launch_limits.hpp"

#include "cunumpy_kernels/error.hpp"

#include <algorithm>

namespace ck {

namespace {

void check_axes(const Dim3& shape, const int (&limits)[3], const char* label, const std::string& context)
{
    for (int axis = 0; axis < 3; ++axis)
        if (shape[axis] > limits[axis])
            throw LaunchError(context + ": " + label + "[" + std::to_string(axis) + "]=" + std::to_string(shape[axis]) +
                              " exceeds the " + std::to_string(limits[axis]) + " limit");
}

}  // namespace

void throw_launch_limits(const LaunchShape& shape, std::size_t shared_mem, const DeviceInfo& device,
                         const FunctionLimits& function, const std::string& context)
{
    check_axes(shape.block, device.max_block, "block", context);
    check_axes(shape.grid, device.max_grid, "grid", context);
    int threads_limit = device.max_threads_per_block;
    if (function.max_threads_per_block > 0) threads_limit = std::min(threads_limit, function.max_threads_per_block);
    if (shape.block.product() > threads_limit)
        throw LaunchError(context + ": block " + shape.block.to_string() + " has " +
                          std::to_string(shape.block.product()) + " threads, exceeding the " +
                          std::to_string(threads_limit) +
                          " device/kernel limit (the kernel's limit reflects __launch_bounds__ and its registers)");
    auto maximum = static_cast<std::size_t>(std::max(device.shared_per_block, device.shared_per_block_optin));
    auto static_shared = static_cast<std::size_t>(std::max(0, function.static_shared));
    if (shared_mem + static_shared > maximum)
        throw LaunchError(context + ": static shared memory " + std::to_string(static_shared) +
                          " + shared_mem=" + std::to_string(shared_mem) + " exceeds the " + std::to_string(maximum) +
                          " bytes a block may use on this device");
    throw LaunchError(context + ": the launch does not fit the device (grid " + shape.grid.to_string() + ", block " +
                      shape.block.to_string() + ")");  // launch_fits and the checks above disagree: never
}

}  // namespace ck
