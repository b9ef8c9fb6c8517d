// The shape of the call every time step makes: no launch options, an
// automatic n_threads_from, the kernel's 1-D block, the first array's length.
// Inline, for the launch path; launch_shape() starts with it too, and its
// general code gives the same shape for these calls (test_launch_shape).
#pragma once

#include "cunumpy_kernels/launch.hpp"

#include <optional>

namespace ck {

/// The most threads a block has on every CUDA device (cunumpy's check too).
inline constexpr std::int64_t max_threads_per_block = 1024;

/// n / block rounded up, for n >= 0 and block > 0, without overflow near INT64_MAX.
inline std::int64_t blocks_for(std::int64_t n, std::int64_t block) { return n / block + (n % block != 0); }

/// The shape of a default call, or nullopt when the call is not one (or its
/// first array's length is negative): launch_shape() then decides.
inline std::optional<LaunchShape> default_launch_shape(const Launch& launch, const Dim3& block_size,
                                                       const NThreadsFrom& n_threads_from,
                                                       std::span<const Argument> args)
{
    bool defaults = !launch.n_threads && !launch.grid && !launch.block &&
                    n_threads_from.mode() == NThreadsFrom::Mode::automatic && block_size.ndim == 1 &&
                    block_size.y == 1 && block_size.z == 1 && block_size.x > 0 && block_size.x <= max_threads_per_block;
    if (!defaults) return std::nullopt;
    for (const auto& arg : args) {
        if (!arg.is_array() || arg.array().ndim <= 0) continue;
        std::int64_t n = arg.array().shape[0];
        if (n < 0) return std::nullopt;
        return LaunchShape{Dim3(blocks_for(n, block_size.x)), block_size};
    }
    return std::nullopt;
}

}  // namespace ck
