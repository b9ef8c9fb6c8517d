// Launch arithmetic (cunumpy's launch_shape and n_threads_from) and the limit
// checks made before a launch.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/launch.hpp"

#include "runtime/launch_limits.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

TEST_SUITE_BEGIN("launch_shape");

using namespace ck;

namespace {

std::vector<double> storage(64);

Argument array(std::initializer_list<std::int64_t> shape)
{
    return Argument(make_array_view(storage.data(), ElementType::float64,
                                    std::span<const std::int64_t>(shape.begin(), shape.size()), Memory::device));
}

LaunchShape shape_of(const Launch& launch, Dim3 block = Dim3(128), NThreadsFrom from = NThreadsFrom::automatic(),
                     std::vector<Argument> args = {})
{
    return launch_shape(launch, block, from, args);
}

DeviceInfo h200()
{
    DeviceInfo info;
    info.name = "NVIDIA H200";
    info.cc_major = 9;
    info.max_threads_per_block = 1024;
    info.max_block[0] = 1024;
    info.max_block[1] = 1024;
    info.max_block[2] = 64;
    info.max_grid[0] = 2147483647;
    info.max_grid[1] = 65535;
    info.max_grid[2] = 65535;
    info.shared_per_block = 49152;
    info.shared_per_block_optin = 232448;
    return info;
}

}  // namespace

TEST_CASE("n_threads is divided by the block and rounded up")
{
    auto shape = shape_of(Launch{.n_threads = Dim3(1000)});
    CHECK(shape.grid == Dim3(8));
    CHECK(shape.block == Dim3(128));
    shape = shape_of(Launch{.n_threads = Dim3(100, 50)}, Dim3(16, 16));
    CHECK(shape.grid == Dim3(7, 4));
    CHECK(shape.block == Dim3(16, 16));
}

TEST_CASE("the grid is the rounded-up quotient for every block size, powers of two or not")
{
    // Against the plain formula, for every block size a launch can have.
    const std::int64_t threads[] = {
        0, 1, 2, 3, 127, 128, 129, 1000, 1023, 1024, 1025, 65535, 65536, 4294967297LL, (std::int64_t(1) << 62) + 5};
    for (std::int64_t block = 1; block <= 1024; ++block)
        for (std::int64_t n : threads) {
            auto shape = shape_of(Launch{.n_threads = Dim3(n)}, Dim3(block));
            INFO("n_threads " << n << ", block " << block);
            REQUIRE(shape.grid.x == n / block + (n % block != 0));
        }
    auto shape = shape_of(Launch{.n_threads = Dim3(1000, 33, 9)}, Dim3(96, 3, 2));
    CHECK(shape.grid == Dim3(11, 11, 5));
}

TEST_CASE("a call with no launch options gets the shape that n_threads of the first array's length gives")
{
    // The default call takes a short path; it must agree with the general one.
    const std::int64_t lengths[] = {0, 1, 127, 128, 129, 1000, 65537, 4294967297LL};
    for (std::int64_t block : {1, 32, 96, 128, 1000, 1024})
        for (std::int64_t n : lengths) {
            INFO("length " << n << ", block " << block);
            std::vector<Argument> args = {Argument(0.5), array({n, 3}), array({2})};
            LaunchShape fast = launch_shape(Launch{}, Dim3(block), NThreadsFrom::automatic(), args);
            LaunchShape general =
                launch_shape(Launch{.n_threads = Dim3(n)}, Dim3(block), NThreadsFrom::automatic(), args);
            CHECK(fast.grid == general.grid);
            CHECK(fast.block == general.block);
        }
    // What the short path leaves to the general one: its errors and its other cases.
    ArrayView bad = make_array_view(storage.data(), ElementType::float64, std::vector<std::int64_t>{4}, Memory::device);
    bad.shape[0] = -1;  // views made by hand are not checked
    std::vector<Argument> negative = {Argument(bad)};
    CHECK_THROWS_WITH_AS(shape_of(Launch{}, Dim3(128), NThreadsFrom::automatic(), negative),
                         doctest::Contains("n_threads must be non-negative"), LaunchError);
    CHECK_THROWS_AS(shape_of(Launch{}, Dim3(0)), LaunchError);
    CHECK_THROWS_AS(shape_of(Launch{}, Dim3(2048)), LaunchError);
    std::vector<Argument> none = {Argument(1.0)};
    CHECK_THROWS_WITH_AS(shape_of(Launch{}, Dim3(128), NThreadsFrom::automatic(), none),
                         doctest::Contains("inferring n_threads needs an array argument"), LaunchError);
    Dim3 wide(512);
    wide.y = 4;  // one dimension named, two set: the general path counts 2048 threads
    CHECK_THROWS_AS(shape_of(Launch{}, wide, NThreadsFrom::automatic(), {array({10})}), LaunchError);
    auto last = shape_of(Launch{}, Dim3(128), NThreadsFrom::last_axis(), {array({3, 1000})});
    CHECK(last.grid == Dim3(8));
}

TEST_CASE("a Dim3 filled in by hand is refused, not divided by or overflowed")
{
    // Axes past ndim are launched too: none may be 0 (a division by zero)
    // or negative, and no axis of a block may pass 1024 (an overflowing product).
    Dim3 flat(128);
    flat.z = 0;
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = Dim3(1000)}, flat),
                         doctest::Contains("a block's unused axes must be 1, got z = 0"), LaunchError);
    CHECK_THROWS_WITH_AS(shape_of(Launch{}, flat, NThreadsFrom::automatic(), {array({10})}),
                         doctest::Contains("unused axes must be 1"), LaunchError);
    Dim3 huge(std::numeric_limits<std::int64_t>::max(), 2, 2);
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = Dim3(10, 10, 10)}, huge),
                         doctest::Contains("at most 1024 threads"), LaunchError);
    Dim3 hidden(1000);
    hidden.y = -3;
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = hidden}),
                         doctest::Contains("n_threads must be non-negative, got y = -3"), LaunchError);
    CHECK_THROWS_AS(shape_of(Launch{.grid = hidden}), LaunchError);
    // The largest sizes round up without overflow.
    const std::int64_t most = std::numeric_limits<std::int64_t>::max();
    CHECK(shape_of(Launch{.n_threads = Dim3(most)}).grid == Dim3(most / 128 + 1));
    CHECK(shape_of(Launch{}, Dim3(128), NThreadsFrom::automatic(), {array({4})}).grid == Dim3(1));
    ArrayView longest =
        make_array_view(storage.data(), ElementType::float64, std::vector<std::int64_t>{4}, Memory::device);
    longest.shape[0] = most;
    CHECK(shape_of(Launch{}, Dim3(1024), NThreadsFrom::automatic(), {Argument(longest)}).grid == Dim3(most / 1024 + 1));
}

TEST_CASE("a 1D block with 2D or 3D n_threads becomes (b, 1[, 1])")
{
    auto shape = shape_of(Launch{.n_threads = Dim3(300, 7)});
    CHECK(shape.grid == Dim3(3, 7));
    CHECK(shape.block == Dim3(128, 1));
    shape = shape_of(Launch{.n_threads = Dim3(10, 2, 3)}, Dim3(4));
    CHECK(shape.grid == Dim3(3, 2, 3));
    CHECK(shape.block == Dim3(4, 1, 1));
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = Dim3(10)}, Dim3(4, 4)),
                         doctest::Contains("different numbers of dimensions"), LaunchError);
}

TEST_CASE("an explicit grid and block win; a zero axis is an empty launch")
{
    auto shape =
        shape_of(Launch{.grid = Dim3(5, 2), .block = Dim3(32)}, Dim3(128), NThreadsFrom::automatic(), {array({9})});
    CHECK(shape.grid == Dim3(5, 2));
    CHECK(shape.block == Dim3(32));
    CHECK_FALSE(shape.empty());
    CHECK(shape_of(Launch{.n_threads = Dim3(0)}).empty());
    CHECK(shape_of(Launch{.grid = Dim3(4, 0)}).empty());
}

TEST_CASE("the size comes from the leading axes of the first array, one per block dimension")
{
    std::vector<Argument> args = {Argument(2.0), array({40, 8}), array({3})};
    auto shape = launch_shape(Launch{}, Dim3(16), NThreadsFrom::automatic(), args);
    CHECK(shape.grid == Dim3(3));
    shape = launch_shape(Launch{}, Dim3(8, 4), NThreadsFrom::automatic(), args);
    CHECK(shape.grid == Dim3(5, 2));
    shape = launch_shape(Launch{}, Dim3(4), NThreadsFrom::last_axis(), args);
    CHECK(shape.grid == Dim3(2));
    shape = launch_shape(Launch{}, Dim3(8), NThreadsFrom::first_array(), args);
    CHECK(shape.grid == Dim3(5));
    // first_array is one axis: a 2D block does not fit it (as in cunumpy)
    CHECK_THROWS_WITH_AS(launch_shape(Launch{}, Dim3(8, 4), NThreadsFrom::first_array(), args),
                         doctest::Contains("different numbers of dimensions"), LaunchError);
    // explicit n_threads beats inference
    shape = launch_shape(Launch{.n_threads = Dim3(1)}, Dim3(16), NThreadsFrom::automatic(), args);
    CHECK(shape.grid == Dim3(1));
    CHECK_THROWS_WITH_AS(launch_shape(Launch{}, Dim3(4, 4, 4), NThreadsFrom::automatic(), args),
                         doctest::Contains("cannot infer 3D n_threads"), LaunchError);
}

TEST_CASE("n_threads_from: a function of the arguments, or none, which requires a size")
{
    auto from = NThreadsFrom::function([](std::span<const Argument> args) { return Dim3(args[0].as_int()); });
    std::vector<Argument> args = {Argument(1000LL)};
    CHECK(launch_shape(Launch{}, Dim3(100), from, args).grid == Dim3(10));
    CHECK_THROWS_WITH_AS(launch_shape(Launch{}, Dim3(128), NThreadsFrom::none(), args),
                         doctest::Contains("n_threads is required"), LaunchError);
    CHECK(launch_shape(Launch{.n_threads = Dim3(3)}, Dim3(128), NThreadsFrom::none(), args).grid == Dim3(1));
    CHECK_THROWS_WITH_AS(launch_shape(Launch{}, Dim3(128), NThreadsFrom::automatic(), args),
                         doctest::Contains("needs an array argument"), LaunchError);
}

TEST_CASE("bad launch sizes are refused before any driver call")
{
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = Dim3(10), .grid = Dim3(1)}), doctest::Contains("exactly one"),
                         LaunchError);
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = Dim3(-1)}), doctest::Contains("non-negative"), LaunchError);
    CHECK_THROWS_WITH_AS(shape_of(Launch{.grid = Dim3(1, -2)}), doctest::Contains("non-negative"), LaunchError);
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = Dim3(10), .block = Dim3(2048)}),
                         doctest::Contains("at most 1024"), LaunchError);
    CHECK_THROWS_WITH_AS(shape_of(Launch{.n_threads = Dim3(10), .block = Dim3(0)}), doctest::Contains("positive"),
                         LaunchError);
    CHECK(Dim3(128).to_string() == "(128,)");
    CHECK(Dim3(16, 16).to_string() == "(16, 16)");
}

TEST_CASE("limits: block and grid per axis, threads against device and kernel, shared memory with opt-in")
{
    DeviceInfo device = h200();
    FunctionLimits function{1024, 0};
    std::string context = "kernel 'push' on CUDA device 0 (NVIDIA H200)";
    check_launch_limits({Dim3(8), Dim3(128)}, 0, device, function, context);
    check_launch_limits({Dim3(1), Dim3(32)}, 100 * 1024, device, function, context);  // above 48 KiB: opt-in

    CHECK_THROWS_WITH_AS(
        check_launch_limits({Dim3(1), Dim3(1, 1, 128)}, 0, device, function, context),
        doctest::Contains("kernel 'push' on CUDA device 0 (NVIDIA H200): block[2]=128 exceeds the 64 limit"),
        LaunchError);
    CHECK_THROWS_WITH_AS(check_launch_limits({Dim3(1, 70000), Dim3(32)}, 0, device, function, context),
                         doctest::Contains("grid[1]=70000"), LaunchError);
    FunctionLimits bounded{256, 0};  // __launch_bounds__(256)
    CHECK_THROWS_WITH_AS(check_launch_limits({Dim3(1), Dim3(512)}, 0, device, bounded, context),
                         doctest::Contains("exceeding the 256 device/kernel limit"), LaunchError);
    FunctionLimits with_static{1024, 32 * 1024};
    CHECK_THROWS_WITH_AS(check_launch_limits({Dim3(1), Dim3(32)}, 200 * 1024, device, with_static, context),
                         doctest::Contains("static shared memory 32768 + shared_mem=204800 exceeds the 232448"),
                         LaunchError);
}

TEST_SUITE_END();
