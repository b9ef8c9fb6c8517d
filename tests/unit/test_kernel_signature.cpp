// The runtime's reader of __global__ parameter types.
#include "cunumpy_kernels/error.hpp"

#include "runtime/kernel_signature.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("kernel_signature");

using namespace ck;

namespace {

std::vector<KernelParameter> read(const std::string& source, const std::string& name = "push")
{
    return read_global_signature(source, name, "push_cuda.cu").parameters;
}

}  // namespace

TEST_CASE("scalars, pointers, views and structs, with qualifiers and comments")
{
    auto p = read(
        "#include \"common.cuh\"\n"
        "// __global__ void push(int wrong)\n"
        "/* __global__ void push(float also_wrong) */\n"
        "extern \"C\" __global__ void __launch_bounds__(256)\n"
        "push(const double* __restrict__ x, double *v, unsigned long long n, long n2, int8_t small,\n"
        "     Array2D< const double > a, CArray3D<float> c, Markers markers, struct Domain d, void* raw,\n"
        "     thrust::complex<double> z, double w[])\n"
        "{\n}\n");
    REQUIRE(p.size() == 12);
    CHECK(p[0].name == "x");
    CHECK(p[0].kind == ParameterKind::pointer);
    CHECK(p[0].element == ElementType::float64);
    CHECK(p[1].kind == ParameterKind::pointer);
    CHECK(p[2].kind == ParameterKind::scalar);
    CHECK(p[2].element == ElementType::uint64);
    CHECK(p[3].element == ElementType::int64);  // long is 64-bit (LP64)
    CHECK(p[4].element == ElementType::int8);
    CHECK(p[5].kind == ParameterKind::array_view);
    CHECK(p[5].view_ndim == 2);
    CHECK(p[5].packed_size() == 40);
    CHECK(p[6].kind == ParameterKind::carray_view);
    CHECK(p[6].element == ElementType::float32);
    CHECK(p[6].packed_size() == 32);
    CHECK(p[7].kind == ParameterKind::structure);
    CHECK(p[7].ctype == "Markers");
    CHECK(p[8].ctype == "Domain");
    CHECK(p[9].kind == ParameterKind::void_pointer);
    CHECK(p[10].element == ElementType::complex128);
    CHECK(p[11].kind == ParameterKind::pointer);
    CHECK(describe_parameter(p[0], 0) == "argument 0 (double* x)");
    CHECK(describe_parameter(p[2], 2) == "argument 2 (unsigned long long n)");
}

TEST_CASE("the definition wins over a prototype; other kernels are ignored")
{
    auto p = read(
        "__global__ void push(double*, int);\n"
        "__global__ void pusher(float a) {}\n"
        "__global__ void push(double* x, int n) { }\n");
    REQUIRE(p.size() == 2);
    CHECK(p[1].name == "n");
    CHECK(read("__global__ void push() {}").empty());
    CHECK(read("__global__ void push(void) {}").empty());
}

TEST_CASE("unreadable signatures are errors naming file and line")
{
    CHECK_THROWS_WITH_AS(read("__global__ void other(int n) {}"),
                         doctest::Contains("push_cuda.cu: no __global__ function 'push'"), SourceError);
    CHECK_THROWS_WITH_AS(read("\n\ntemplate <typename T>\n__global__ void push(T* x) {}"),
                         doctest::Contains("push_cuda.cu:4: __global__ push is a template"), SourceError);
    CHECK_THROWS_WITH_AS(read("\n__global__ void push(double** x) {}"),
                         doctest::Contains("push_cuda.cu:2: cannot check"), SourceError);
    CHECK_THROWS_WITH_AS(read("__global__ void push(Markers* m) {}"), doctest::Contains("structs are passed by value"),
                         SourceError);
    CHECK_THROWS_WITH_AS(read("__global__ void push(double& x) {}"), doctest::Contains("reference"), SourceError);
    CHECK_THROWS_WITH_AS(read("__global__ void push(REAL) {}"), doctest::Contains("(REAL) has no name"), SourceError);
    CHECK_THROWS_WITH_AS(read("__global__ void push(void (*f)(int)) {}"), doctest::Contains("function pointers"),
                         SourceError);
}

TEST_SUITE_END();
