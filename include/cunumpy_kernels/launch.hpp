// The launch configuration of a CUDA kernel call and the arithmetic that turns
// it into a grid and a block, as cunumpy's CudaKernel.launch_shape does.
#pragma once

#include "cunumpy_kernels/arguments.hpp"
#include "cunumpy_kernels/export.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

struct CUstream_st;

namespace ck {

/// A CUDA stream (the driver's CUstream); nullptr is the default stream.
using Stream = CUstream_st*;

/// A size of 1 to 3 dimensions (threads, blocks). Unused axes are 1.
struct CK_API Dim3 {
    std::int64_t x = 1, y = 1, z = 1;
    int ndim = 1;

    Dim3() = default;
    Dim3(std::int64_t x_) : x(x_), ndim(1) {}
    Dim3(std::int64_t x_, std::int64_t y_) : x(x_), y(y_), ndim(2) {}
    Dim3(std::int64_t x_, std::int64_t y_, std::int64_t z_) : x(x_), y(y_), z(z_), ndim(3) {}

    std::int64_t operator[](int axis) const { return axis == 0 ? x : axis == 1 ? y : z; }
    std::int64_t product() const { return x * y * z; }
    /// "(128,)", "(16, 16)", as cunumpy prints shapes.
    std::string to_string() const;
    bool operator==(const Dim3&) const = default;
};

/// The launch options of one call. Either `n_threads` (the grid is n_threads
/// divided by the block, rounded up) or `grid`; with neither, the size comes
/// from the kernel's NThreadsFrom. Ignored when the host kernel runs.
struct Launch {
    std::optional<Dim3> n_threads{};  ///< threads in 1 to 3 dimensions
    std::optional<Dim3> grid{};       ///< blocks, instead of n_threads
    std::optional<Dim3> block{};      ///< block shape for this call, instead of the kernel's block size
    std::size_t shared_mem = 0;       ///< dynamic shared memory per block, bytes (`extern __shared__`)
    Stream stream = nullptr;          ///< stream of the current context; nullptr: the default stream
};

/// How a call without n_threads or grid gets its size (cunumpy's
/// `n_threads_from`).
class CK_API NThreadsFrom {
public:
    using Function = std::function<Dim3(std::span<const Argument>)>;
    enum class Mode { automatic, first_array, last_axis, function, none };

    /// The default: the leading axes of the first array argument, one per
    /// block dimension (a 1D block takes the first axis). Here and below,
    /// "the first array" passes over 0-D arrays, which have no axis.
    static NThreadsFrom automatic() { return NThreadsFrom(Mode::automatic); }
    /// The first axis of the first array argument.
    static NThreadsFrom first_array() { return NThreadsFrom(Mode::first_array); }
    /// The last axis of the first array argument (component-major `(ncomp, N)`).
    static NThreadsFrom last_axis() { return NThreadsFrom(Mode::last_axis); }
    /// A function of the arguments, e.g. the marker count of a struct.
    static NThreadsFrom function(Function f) { return NThreadsFrom(std::move(f)); }
    /// No inference: every call must give n_threads or grid.
    static NThreadsFrom none() { return NThreadsFrom(Mode::none); }

    Mode mode() const { return mode_; }
    /// The inferred size. Throws LaunchError when there is no array argument
    /// (structs are opaque here: use a function), when the first array has
    /// fewer axes than `dimensions`, or for Mode::none.
    Dim3 infer(std::span<const Argument> args, int dimensions) const;

private:
    explicit NThreadsFrom(Mode mode) : mode_(mode) {}
    explicit NThreadsFrom(Function f) : mode_(Mode::function), function_(std::move(f)) {}
    Mode mode_;
    Function function_;
};

/// The default threads per block (cunumpy's `block_size`): 128.
inline constexpr std::int64_t default_block_size = 128;

/// A grid and a block.
struct LaunchShape {
    Dim3 grid;
    Dim3 block;
    /// A grid with a zero axis launches nothing.
    bool empty() const { return grid.x == 0 || grid.y == 0 || grid.z == 0; }
};

/// The grid and block of a call. The block is `launch.block`, else
/// `block_size`; a 1D block with 2D or 3D n_threads becomes (b, 1[, 1]).
/// Throws LaunchError when both or neither of n_threads and grid result, a
/// size is negative, a block has a non-positive axis or more than 1024
/// threads, or block and n_threads have different dimensions (other than a
/// 1D block). Device limits are checked at launch, not here.
CK_API LaunchShape launch_shape(const Launch& launch, const Dim3& block_size, const NThreadsFrom& n_threads_from,
                                std::span<const Argument> args);

}  // namespace ck
