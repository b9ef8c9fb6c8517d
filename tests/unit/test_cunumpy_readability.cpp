// The model of cunumpy 0.7.1's parse_cuda_signature; the e2e test
// test_cunumpy_readability.py checks it against the real one.
#include "signatures/cunumpy_readability.hpp"

#include <doctest/doctest.h>

#include <chrono>

TEST_SUITE_BEGIN("cunumpy_readability");

using namespace ck::signatures;
using Names = std::vector<std::string>;

namespace {

CunumpyReading read(const std::string& source, int hint_line = 1, const std::vector<std::string>* args = nullptr)
{
    return read_as_cunumpy(source, "push", args, hint_line);
}

void check_raises(const std::string& source, const std::string& part, int hint_line = 1)
{
    CunumpyReading r = read(source, hint_line);
    INFO(source);
    INFO(r.why);
    CHECK(r.raises);
    CHECK(r.why.find(part) != std::string::npos);
}

}  // namespace

TEST_CASE("what cunumpy reads: the first `__global__ void push(`, comments removed its way")
{
    CunumpyReading r = read(
        "/* push(int wrong) */\nextern \"C\" __global__ void push(const double* __restrict__ x,\n"
        "    Array2D< const double > a, thrust::complex<double> z, unsigned long long n) {}\n",
        2);
    CHECK_FALSE(r.raises);
    CHECK(r.names == Names{"x", "a", "z", "n"});
    CHECK(r.line == 2);
    CHECK(read("__global__ void push(void) {}\n").names.empty());
    CHECK(read("__global__ void push(Markers m, int n) {}\n").names == Names{"m", "n"});  // a struct of structs=
    CHECK(read("__global__ void push(double* x, int n = 4) {}\n").names == Names{"x", "n"});
    // A stale declaration first: no error, but other names.
    r = read("#if 0\n__global__ void push(double* a, int b);\n#endif\n__global__ void push(double* x, int n) {}\n", 4);
    CHECK_FALSE(r.raises);
    CHECK(r.names == Names{"a", "b"});
    CHECK(r.line == 2);
}

TEST_CASE("the forms it cannot read, each with why and what to write instead")
{
    check_raises("__global__ void __launch_bounds__(256) push(double* x) {}\n",
                 "`__launch_bounds__(...)` stands between `__global__`, `void` and the name");
    check_raises("__global__ __launch_bounds__(128, 4) void push(double* x) {}\n",
                 "write it first (`__launch_bounds__(128, 4) __global__ void push(...)`)");
    check_raises("#define KERNEL extern \"C\" __global__\nKERNEL void push(double* x) {}\n",
                 "`__global__` comes from a macro", 2);
    check_raises("const char* s = \"/*\";\n__global__ void push(double* x) {}\n// */\n",
                 "a `/*` or `//` inside a string or character literal hides this declaration", 2);
    check_raises("const char* u = \"http://a\"; __global__ void push(double* x) {}\n", "inside a string");
    check_raises("void __global__ push(double* x) {}\n", "nothing between the words");
    check_raises("__global__ void push(double*, int);\n__global__ void push(double* x, int n) {}\n",
                 "cannot parse the parameter 'double*' (a parameter without a name); it reads the first declaration it "
                 "finds, at line 1, not the definition",
                 2);
    check_raises("__global__ void push(double* x, int n = N) {}\n", "unsupported type 'int n' (a default argument");
    check_raises("__global__ void push(const __grid_constant__ double a) {}\n", "(it does not know __grid_constant__");
    check_raises("template <typename T>\n__global__ void push(T* x) {}\n",
                 "'push' is a template with 1 parameter, which it reads only with template_args", 2);
    check_raises("__global__ void push(double** x) {}\n", "unsupported type 'double**'");
    check_raises("__global__ void push(std::size_t n) {}\n", "unsupported type 'std size_t'");
    check_raises("__global__ void push(Array2D<double>* a) {}\n", "array views take a scalar element type");
    check_raises("__global__ void push(double* x, int n\n", "unbalanced parentheses");
}

TEST_CASE("template arguments are substituted as cunumpy substitutes them")
{
    std::vector<std::string> args = {"float", "3"};
    std::string source = "template <typename T, int N>\n__global__ void push(T* x, Array2D<T> a, int n) {}\n";
    CunumpyReading r = read(source, 2, &args);
    CHECK_FALSE(r.raises);
    CHECK(r.names == Names{"x", "a", "n"});
    std::vector<std::string> one = {"float"};
    CHECK(read(source, 2, &one).why.find("template with 2 parameters") != std::string::npos);
    CHECK(read("__global__ void push(double* x) {}\n", 1, &one).why.find("is not a template") != std::string::npos);
}

TEST_CASE("inputs built to defeat the search stay fast")
{
    std::string source;
    for (int i = 0; i < 20000; ++i) source += "template < a > b > c ";
    source += "__global__ void push(double* x) {}\n";
    auto start = std::chrono::steady_clock::now();
    CunumpyReading r = read(source);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    CHECK(r.names == Names{"x"});
    CHECK(read("").raises);
    CHECK(read("/*/").raises);
    CHECK(read("__global__ void push(").raises);
}

TEST_SUITE_END();
