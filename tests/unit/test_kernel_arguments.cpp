// Arguments: views, cunumpy's scalar conversions, the checks and packing
// against a parsed signature, and typed host kernels.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/kernel.hpp"

#include "runtime/argument_packer.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <utility>

TEST_SUITE_BEGIN("kernel_arguments");

using namespace ck;

namespace {

std::vector<KernelParameter> parameters(const std::string& declaration)
{
    return read_global_signature("extern \"C\" __global__ void k(" + declaration + ") {}", "k", "k_cuda.cu").parameters;
}

template <typename T>
T unpack(PackedArguments& packed, std::size_t index)
{
    T value{};
    std::memcpy(&value, packed.pointers()[index], sizeof(T));
    return value;
}

double device_memory[64];

ArrayView device_view(std::initializer_list<std::int64_t> shape, ElementType type = ElementType::float64)
{
    return make_array_view(device_memory, type, std::span<const std::int64_t>(shape.begin(), shape.size()),
                           Memory::device);
}

struct Markers {
    double* x;
    long long n;
};

}  // namespace

TEST_CASE("array views: C-order strides, contiguity, the span a copy covers")
{
    double host[12];
    ArrayView view = host_array(host, {3, 4});
    CHECK(view.ndim == 2);
    CHECK(view.strides[0] == 4);
    CHECK(view.strides[1] == 1);
    CHECK(view.size() == 12);
    CHECK(view.c_contiguous());
    CHECK(view.element_span() == std::pair<std::int64_t, std::int64_t>(0, 12));
    std::int64_t shape[] = {3, 2};
    std::int64_t strides[] = {4, 1};  // storage[:, :2] of a 3x4 buffer
    ArrayView gaps = make_strided_view(host, ElementType::float64, shape, strides, Memory::host);
    CHECK_FALSE(gaps.c_contiguous());
    CHECK(gaps.element_span() == std::pair<std::int64_t, std::int64_t>(0, 10));
    std::int64_t reversed[] = {-1};
    std::int64_t three[] = {3};
    CHECK(make_strided_view(host + 2, ElementType::float64, three, reversed, Memory::host).element_span() ==
          std::pair<std::int64_t, std::int64_t>(-2, 1));
    std::int64_t too_many[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_THROWS_AS(make_array_view(host, ElementType::float64, too_many, Memory::host), ArgumentError);
}

TEST_CASE("scalars convert as cunumpy casts them")
{
    std::int32_t i32 = 0;
    convert_scalar(Argument(7LL), ElementType::int32, &i32, "n");
    CHECK(i32 == 7);
    CHECK_THROWS_WITH_AS(
        convert_scalar(Argument(1LL << 40), ElementType::int32, &i32, "kernel 'k': argument 1 (int n)"),
        doctest::Contains("kernel 'k': argument 1 (int n) expects a int32 scalar: 1099511627776 is out of range "
                          "[-2147483648, 2147483647]"),
        ArgumentError);
    std::uint8_t u8 = 0;
    CHECK_THROWS_AS(convert_scalar(Argument(-1), ElementType::uint8, &u8, "x"), ArgumentError);
    std::uint64_t u64 = 0;
    convert_scalar(Argument(~0ULL), ElementType::uint64, &u64, "x");
    CHECK(u64 == ~0ULL);
    CHECK_THROWS_AS(convert_scalar(Argument(~0ULL), ElementType::int64, &u64, "x"), ArgumentError);

    double d = 0;
    convert_scalar(Argument(3), ElementType::float64, &d, "x");  // int -> float
    CHECK(d == 3.0);
    float f = 0;
    convert_scalar(Argument(0.5), ElementType::float32, &f, "x");  // a C++ double is a Python float
    CHECK(f == 0.5f);
    CHECK_THROWS_WITH_AS(convert_scalar(Argument(0.5), ElementType::int64, &u64, "x"),
                         doctest::Contains("lose information"), ArgumentError);
    bool b = false;
    convert_scalar(Argument(true), ElementType::boolean, &b, "x");
    CHECK(b);
    convert_scalar(Argument(true), ElementType::int32, &i32, "x");
    CHECK(i32 == 1);
    CHECK_THROWS_AS(convert_scalar(Argument(true), ElementType::float64, &d, "x"), ArgumentError);
    CHECK_THROWS_AS(convert_scalar(Argument(1), ElementType::boolean, &b, "x"), ArgumentError);
    std::complex<double> z;
    convert_scalar(Argument(std::complex<double>(1, 2)), ElementType::complex128, &z, "x");
    CHECK(z == std::complex<double>(1, 2));
    convert_scalar(Argument(2.0), ElementType::complex128, &z, "x");
    CHECK(z == std::complex<double>(2, 0));
    CHECK_THROWS_AS(convert_scalar(Argument(std::complex<double>(1, 2)), ElementType::float64, &d, "x"), ArgumentError);
    CHECK_THROWS_WITH_AS(convert_scalar(Argument(device_view({2})), ElementType::float64, &d, "x"),
                         doctest::Contains("not a scalar"), ArgumentError);
}

TEST_CASE("the packer packs pointers, scalars and views in the driver's layout")
{
    ArgumentPacker packer("push", parameters("double* x, const double* __restrict__ e, double dt, int n, "
                                             "Array2D<double> a, CArray2D<double> c, void* raw"));
    ArrayView x = device_view({8});
    std::int64_t shape[] = {3, 2};
    std::int64_t strides[] = {4, 1};
    ArrayView strided = make_strided_view(device_memory + 1, ElementType::float64, shape, strides, Memory::device);
    ArrayView contiguous = device_view({2, 3});
    ArrayView bytes = device_view({5}, ElementType::uint8);
    std::vector<Argument> args = {x, x, 0.25, 42LL, strided, contiguous, bytes};
    PackedArguments packed;
    packer.pack(args, {}, packed);
    REQUIRE(packed.count() == 7);
    CHECK(unpack<void*>(packed, 0) == device_memory);
    CHECK(unpack<double>(packed, 2) == 0.25);
    CHECK(unpack<std::int32_t>(packed, 3) == 42);
    std::int64_t view[5];
    std::memcpy(view, packed.pointers()[4], sizeof view);
    CHECK(reinterpret_cast<double*>(view[0]) == device_memory + 1);
    CHECK(view[1] == 3);
    CHECK(view[2] == 2);
    CHECK(view[3] == 4);  // strides in elements
    CHECK(view[4] == 1);
    std::int64_t cview[3];
    std::memcpy(cview, packed.pointers()[5], sizeof cview);
    CHECK(cview[1] == 2);
    CHECK(cview[2] == 3);
    CHECK(unpack<void*>(packed, 6) == device_memory);
}

TEST_CASE("argument errors name the kernel, the position and name, and what was expected")
{
    ArgumentPacker packer("push", parameters("double* x, double dt, int n"));
    ArrayView x = device_view({8});
    double host[8];
    auto message = [&](std::vector<Argument> args) {
        try {
            packer.check(args);
        } catch (const ArgumentError& error) {
            return std::string(error.what());
        }
        return std::string("no error");
    };
    CHECK(message({x, 0.1}) == "kernel 'push' takes 3 arguments (x, dt, n), got 2");
    CHECK(message({0.1, 0.1, 3}) ==
          "kernel 'push': argument 0 (double* x) must be a device array of float64, got a float64 scalar");
    CHECK(message({host_array(host, {8}), 0.1, 3})
              .find("argument 0 (double* x) must be a device array of float64, got a 1D float64 host array; arrays are "
                    "never "
                    "copied") != std::string::npos);
    CHECK(message({device_view({8}, ElementType::float32), 0.1, 3}).find("got a 1D float32 device array") !=
          std::string::npos);
    CHECK(message({x, x, 3}).find("argument 1 (double dt) must be a float64 scalar, got a 1D float64 device array") !=
          std::string::npos);
    CHECK(message({x, 0.1, 1LL << 33}).find("argument 2 (int n) must be a int32 scalar") != std::string::npos);
    CHECK(message({x, 0.1, 1LL << 33}).find("out of range") != std::string::npos);
    std::int64_t shape[] = {4};
    std::int64_t strides[] = {2};
    CHECK(message({make_strided_view(device_memory, ElementType::float64, shape, strides, Memory::device), 0.1, 3})
              .find("must be C-contiguous") != std::string::npos);
    CHECK(message({x, 0.1, 3}) == "no error");

    ArgumentPacker views("gather", parameters("CArray2D<double> c"));
    std::int64_t s2[] = {2, 2};
    std::int64_t st2[] = {4, 1};
    CHECK_THROWS_WITH_AS(views.check(std::vector<Argument>{
                             make_strided_view(device_memory, ElementType::float64, s2, st2, Memory::device)}),
                         doctest::Contains("declare the parameter as Array2D"), ArgumentError);
    CHECK_THROWS_WITH_AS(views.check(std::vector<Argument>{x}), doctest::Contains("must be a 2D array"), ArgumentError);
}

TEST_CASE("structs pass by value; their size is checked against the driver's layout")
{
    ArgumentPacker packer("push", parameters("Markers m, double dt"));
    Markers markers{nullptr, 10};
    std::vector<Argument> args = {struct_value(markers, "Markers"), 0.5};
    PackedArguments packed;
    std::size_t sizes[] = {sizeof(Markers), 0};
    packer.pack(args, sizes, packed);
    CHECK(packed.pointers()[0] == &markers);  // the driver copies the bytes at launch
    std::size_t wrong[] = {24, 0};
    PackedArguments again;
    CHECK_THROWS_WITH_AS(packer.pack(args, wrong, again),
                         doctest::Contains("argument 0 (Markers m) must be a struct of 24 bytes (the size the driver "
                                           "reports for Markers), got a struct (Markers, 16 bytes)"),
                         ArgumentError);
    struct Domain {
        double lo, hi;
    } domain{0, 1};
    PackedArguments third;
    CHECK_THROWS_WITH_AS(packer.pack(std::vector<Argument>{struct_value(domain, "Domain"), 0.5}, sizes, third),
                         doctest::Contains("must be a value of struct Markers"), ArgumentError);
    CHECK_THROWS_AS(packer.check(std::vector<Argument>{0.5, 0.5}), ArgumentError);
}

TEST_CASE("the fixed layout packs what packing one argument at a time packs")
{
    // Every parameter kind and scalar width, conversions included, and a
    // struct between values: the same bytes at the same offsets both ways.
    ArgumentPacker packer("mixed", parameters("double* x, bool flag, complex<double> z, int n, void* raw, float f, "
                                              "Markers m, unsigned char u8, Array2D<double> a, long long count, "
                                              "CArray1D<float> c, double dt"));
    Markers markers{nullptr, 7};
    std::int64_t shape[] = {3, 2};
    std::int64_t strides[] = {4, 1};
    ArrayView strided = make_strided_view(device_memory + 1, ElementType::float64, shape, strides, Memory::device);
    std::vector<Argument> args = {device_view({8}),
                                  true,
                                  std::complex<double>(1.5, -2.5),
                                  42LL,
                                  device_view({5}, ElementType::uint8),
                                  0.75,
                                  struct_value(markers, "Markers"),
                                  200LL,
                                  strided,
                                  -3LL,
                                  device_view({4}, ElementType::float32),
                                  0.125};
    std::size_t sizes[12] = {};
    sizes[6] = sizeof(Markers);
    PackedArguments fixed, each;
    packer.pack(args, sizes, fixed);
    packer.pack_each(args, sizes, each);
    REQUIRE(fixed.count() == args.size());
    REQUIRE(each.count() == args.size());
    const auto* fixed_base = static_cast<const std::byte*>(fixed.pointers()[0]);
    const auto* each_base = static_cast<const std::byte*>(each.pointers()[0]);
    for (std::size_t i = 0; i < args.size(); ++i) {
        INFO("parameter " << i);
        const KernelParameter& p = packer.parameters()[i];
        if (p.kind == ParameterKind::structure) {
            CHECK(fixed.pointers()[i] == &markers);
            CHECK(each.pointers()[i] == &markers);
            continue;
        }
        const auto* a = static_cast<const std::byte*>(fixed.pointers()[i]);
        const auto* b = static_cast<const std::byte*>(each.pointers()[i]);
        CHECK(a - fixed_base == b - each_base);
        CHECK(reinterpret_cast<std::uintptr_t>(a) % (p.packed_size() > 8 ? 16 : 8) == 0);
        CHECK(std::memcmp(a, b, p.packed_size()) == 0);
    }
    CHECK(unpack<std::int32_t>(fixed, 3) == 42);
    CHECK(unpack<float>(fixed, 5) == 0.75f);
    CHECK(unpack<std::uint8_t>(fixed, 7) == 200);
    CHECK(unpack<std::int64_t>(fixed, 9) == -3);

    // What the fixed layout declines goes one argument at a time, which
    // names the fault; a PackedArguments in use is packed after what it holds.
    args[7] = 300LL;
    PackedArguments out_of_range;
    CHECK_THROWS_WITH_AS(packer.pack(args, sizes, out_of_range),
                         doctest::Contains("argument 7 (unsigned char u8) must be a uint8 scalar"), ArgumentError);
    args[7] = 200LL;
    ArgumentPacker one("one", parameters("double dt"));
    PackedArguments used;
    one.pack(std::vector<Argument>{0.5}, {}, used);
    one.pack(std::vector<Argument>{0.25}, {}, used);
    REQUIRE(used.count() == 2);
    CHECK(unpack<double>(used, 0) == 0.5);
    CHECK(unpack<double>(used, 1) == 0.25);
}

TEST_CASE("an argument is checked by what it was made with; a refused one takes no room")
{
    ArgumentPacker typed("typed", parameters("double a, double* p"));
    Argument view = device_view({4});
    view.array().type = ElementType::int32;  // the Argument keeps the type it was made with
    PackedArguments first;
    typed.pack(std::vector<Argument>{1.5, view}, {}, first);
    CHECK(unpack<void*>(first, 1) == device_memory);
    ArgumentPacker ints("ints", parameters("int* p"));
    PackedArguments refused;
    CHECK_THROWS_WITH_AS(ints.pack(std::vector<Argument>{view}, {}, refused),
                         doctest::Contains("must be a device array of int32, got a 1D float64 device array"),
                         ArgumentError);

    PackedArguments again, fresh;
    CHECK_THROWS_AS(typed.pack(std::vector<Argument>{1.5, 2.0}, {}, again), ArgumentError);
    std::vector<Argument> good = {1.5, device_view({4})};
    typed.pack(good, {}, again);  // after the 8 bytes of the first call's 1.5
    typed.pack(good, {}, fresh);
    REQUIRE(again.count() == 3);
    auto offset = [](PackedArguments& packed, std::size_t i) {
        return static_cast<const std::byte*>(packed.pointers()[i]) -
               static_cast<const std::byte*>(packed.pointers()[0]);
    };
    CHECK(offset(again, 1) == 8);
    CHECK(offset(again, 2) == 16);
    CHECK(offset(fresh, 1) == 8);
}

TEST_CASE("an accessor of another kind reads an empty value, never the bytes of what is held")
{
    Argument scalar(std::complex<double>(2.5, -1.0)), view(device_view({4})), value(StructValue{device_memory, 8, "V"});
    CHECK(std::as_const(scalar).array().ndim == 0);
    CHECK(std::as_const(scalar).array().data == nullptr);
    CHECK(scalar.structure().size == 0);
    CHECK(scalar.structure().data == nullptr);
    CHECK(view.structure().size == 0);
    CHECK(std::as_const(value).array().ndim == 0);
    CHECK(view.as_double() == 0.0);
    CHECK(view.as_int() == 0);
    CHECK(value.as_uint() == 0);
    CHECK_FALSE(value.as_bool());
    CHECK(view.as_complex() == std::complex<double>());
    CHECK(scalar.as_complex() == std::complex<double>(2.5, -1.0));
    CHECK(value.structure().size == 8);
    CHECK_THROWS_WITH_AS(scalar.array().data = nullptr, doctest::Contains("array() of a complex128 scalar"),
                         ArgumentError);
    CHECK(scalar.as_double() == 2.5);  // unchanged
}

TEST_CASE("a view filled in by hand with more axes than a view holds is refused, not read past")
{
    for (int ndim : {-1, max_array_dims + 1, 12}) {
        ArrayView view = device_view({4});
        view.ndim = ndim;
        CHECK_THROWS_WITH_AS(Argument{view}, doctest::Contains("an array view has 0 to 8 dimensions"), ArgumentError);
    }
    ArrayView widest = device_view({1, 1, 1, 1, 1, 1, 1, 2});
    CHECK(Argument(widest).array().ndim == max_array_dims);
    ArgumentPacker twelve("twelve", parameters("Array12D<double> a"));
    PackedArguments packed;
    CHECK_THROWS_WITH_AS(twelve.pack(std::vector<Argument>{widest}, {}, packed),
                         doctest::Contains("must be a 12D array, got a 8D float64 device array"), ArgumentError);
}

TEST_CASE("many parameters spill past the inline storage")
{
    std::string declaration;
    std::vector<Argument> args;
    for (int i = 0; i < 80; ++i) {
        declaration += (i ? ", " : "") + std::string("double a") + std::to_string(i);
        args.emplace_back(static_cast<double>(i));
    }
    ArgumentPacker packer("wide", parameters(declaration));
    PackedArguments packed;
    packer.pack(args, {}, packed);
    REQUIRE(packed.count() == 80);
    for (std::size_t i = 0; i < 80; ++i) CHECK(unpack<double>(packed, i) == static_cast<double>(i));
}

namespace {

double pushed_sum = 0;

void push_host(double* x, const double* e, double dt, long long n)
{
    for (long long i = 0; i < n; ++i) x[i] += dt * e[i];
    pushed_sum = x[0];
}

}  // namespace

TEST_CASE("a typed host kernel unpacks and checks its arguments")
{
    HostKernel host = host_kernel(&push_host);
    CHECK(host.arity() == 4);
    std::vector<double> x = {1, 2}, e = {10, 20};
    std::vector<Argument> args = {host_array(x.data(), {2}), host_array(e.data(), {2}), 0.5, 2};
    host(args);
    CHECK(x[1] == 12.0);
    CHECK(pushed_sum == 6.0);
    CHECK_THROWS_WITH_AS(host(std::vector<Argument>{0.5}), doctest::Contains("takes 4 arguments, got 1"),
                         ArgumentError);
    std::vector<float> wrong(2);
    CHECK_THROWS_WITH_AS(host(std::vector<Argument>{host_array(wrong.data(), {2}), host_array(e.data(), {2}), 0.5, 2}),
                         doctest::Contains("argument 0 must be a host array of float64"), ArgumentError);
    CHECK_THROWS_WITH_AS(host(std::vector<Argument>{device_view({2}), host_array(e.data(), {2}), 0.5, 2}),
                         doctest::Contains("host kernels take host arrays"), ArgumentError);
    CHECK_THROWS_AS(host(std::vector<Argument>{host_array(x.data(), {2}), host_array(e.data(), {2}), 0.5, 2.5}),
                    ArgumentError);
}

TEST_SUITE_END();
