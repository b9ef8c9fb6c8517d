// Launch arithmetic: cunumpy's CudaKernel.launch_shape and n_threads_from.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/launch.hpp"
#include "runtime/default_launch_shape.hpp"
#include "util/library_surface.hpp"

namespace ck {

namespace {

const ArrayView* first_array(std::span<const Argument> args)
{
    for (const auto& arg : args)
        if (arg.is_array() && arg.array().ndim > 0) return &arg.array();
    return nullptr;
}

const ArrayView& require_first_array(std::span<const Argument> args)
{
    const ArrayView* view = first_array(args);
    if (!view)
        throw LaunchError(
            "inferring n_threads needs an array argument; pass n_threads or grid, or set "
            "n_threads_from to a function");
    return *view;
}

void check_dims(const Dim3& shape, const char* what)
{
    if (shape.ndim < 1 || shape.ndim > 3)
        throw LaunchError(std::string(what) + " must have 1 to 3 dimensions, got " + std::to_string(shape.ndim));
}

const char* axis_name(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

Dim3 checked_block(const Dim3& block)
{
    check_dims(block, "block");
    for (int axis = 0; axis < block.ndim; ++axis)
        if (block[axis] <= 0) throw LaunchError("block sizes must be positive, got " + block.to_string());
    // The axes past ndim are launched too (a Dim3 filled in by hand may set them).
    for (int axis = block.ndim; axis < 3; ++axis)
        if (block[axis] <= 0)
            throw LaunchError(std::string("a block's unused axes must be 1, got ") + axis_name(axis) + " = " +
                              std::to_string(block[axis]) + " in " + block.to_string());
    std::int64_t threads = 0;
    bool overflow =
        __builtin_mul_overflow(block.x, block.y, &threads) || __builtin_mul_overflow(threads, block.z, &threads);
    if (overflow || threads > max_threads_per_block)
        throw LaunchError("a block has at most 1024 threads, got " + block.to_string() + " = " +
                          (overflow ? "more than 2^63" : std::to_string(threads)));
    return block;
}

void check_non_negative(const Dim3& shape, const char* what)
{
    check_dims(shape, what);
    for (int axis = 0; axis < 3; ++axis)  // the axes past ndim are launched too
        if (shape[axis] < 0)
            throw LaunchError(std::string(what) + " must be non-negative, got " +
                              (axis < shape.ndim ? shape.to_string()
                                                 : std::string(axis_name(axis)) + " = " + std::to_string(shape[axis]) +
                                                       " past its " + std::to_string(shape.ndim) + " dimensions"));
}

Dim3 with_ndim(std::int64_t x, std::int64_t y, std::int64_t z, int ndim)
{
    Dim3 d(x, y, z);
    d.ndim = ndim;
    return d;
}

}  // namespace

std::string Dim3::to_string() const
{
    std::string text = "(" + std::to_string(x);
    if (ndim == 1) return text + ",)";
    text += ", " + std::to_string(y);
    if (ndim == 3) text += ", " + std::to_string(z);
    return text + ")";
}

Dim3 NThreadsFrom::infer(std::span<const Argument> args, int dimensions) const
{
    switch (mode_) {
        case Mode::none:
            throw LaunchError("n_threads_from is none: pass n_threads or grid");
        case Mode::function:
            return util::run_caller_code([&] { return function_(args); });
        case Mode::last_axis: {
            const ArrayView& view = require_first_array(args);
            return Dim3(view.shape[view.ndim - 1]);
        }
        case Mode::first_array:
            dimensions = 1;
            [[fallthrough]];
        case Mode::automatic: {
            const ArrayView& view = require_first_array(args);
            if (view.ndim < dimensions)
                throw LaunchError("cannot infer " + std::to_string(dimensions) + "D n_threads from the first array's " +
                                  std::to_string(view.ndim) + "D shape; pass n_threads or grid, or set n_threads_from");
            return with_ndim(view.shape[0], dimensions > 1 ? view.shape[1] : 1, dimensions > 2 ? view.shape[2] : 1,
                             dimensions);
        }
    }
    throw LaunchError("unknown n_threads_from mode");
}

LaunchShape launch_shape(const Launch& launch, const Dim3& block_size, const NThreadsFrom& n_threads_from,
                         std::span<const Argument> args)
{
    if (auto shape = default_launch_shape(launch, block_size, n_threads_from, args)) [[likely]]
        return *shape;
    Dim3 block = checked_block(launch.block ? *launch.block : block_size);
    std::optional<Dim3> n_threads = launch.n_threads;
    if (!n_threads && !launch.grid) {
        if (n_threads_from.mode() == NThreadsFrom::Mode::none)
            throw LaunchError("n_threads is required to launch the CUDA kernel (or pass grid, or set n_threads_from)");
        n_threads = n_threads_from.infer(args, block.ndim);
    }
    if (n_threads && launch.grid) throw LaunchError("pass exactly one of n_threads and grid, got both");
    if (launch.grid) {
        check_non_negative(*launch.grid, "grid");
        return {*launch.grid, block};
    }
    check_non_negative(*n_threads, "n_threads");
    if (block.ndim != n_threads->ndim) {
        if (block.ndim != 1)
            throw LaunchError("block " + block.to_string() + " and n_threads " + n_threads->to_string() +
                              " have different numbers of dimensions");
        block.ndim = n_threads->ndim;
    }
    Dim3 grid = with_ndim(blocks_for(n_threads->x, block.x), blocks_for(n_threads->y, block.y),
                          blocks_for(n_threads->z, block.z), n_threads->ndim);
    return {grid, block};
}

}  // namespace ck
