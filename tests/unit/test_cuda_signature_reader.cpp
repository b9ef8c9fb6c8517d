#include "signatures/signatures.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("cuda_signature_reader");

using namespace ck;
using Status = SignatureRead::Status;
using Names = std::vector<std::string>;

namespace {

SignatureRead read(const std::string& source, const std::string& name = "push")
{
    return read_cuda_signature(source, name);
}

void check_found(const std::string& source, const Names& names, int line)
{
    SignatureRead r = read(source);
    INFO(source);
    INFO(r.reason);
    REQUIRE(r.status == Status::found);
    CHECK(r.parameters == names);
    CHECK(r.line == line);
}

void check_unreadable(const std::string& source, const std::string& part, int line)
{
    SignatureRead r = read(source);
    INFO(source);
    INFO(r.reason);
    CHECK(r.status == Status::unreadable);
    CHECK(r.reason.find(part) != std::string::npos);
    CHECK(r.line == line);
}

}  // namespace

TEST_CASE("the guide's kernel: extern \"C\" __global__ on its own line")
{
    check_found("extern \"C\" __global__\nvoid push(double a, const double* x, double* y, int n) {\n  y[0] = a;\n}\n",
                {"a", "x", "y", "n"}, 2);
}

TEST_CASE("comments with parentheses and braces, before and inside the declaration")
{
    check_found(
        "// push(a, b) { not this }\n/* __global__ void push(int wrong) { */\n"
        "__global__ void push(double* x /* (in) {x} */, // n: count (of x) }\n int n) {}\n",
        {"x", "n"}, 3);
}

TEST_CASE("string and character literals that hold braces, parentheses and quotes")
{
    check_found(
        "const char* s = \"}\\\" __global__ void push(int wrong) {\";\nchar c = '{';\n"
        "const char* raw = R\"x(__global__ void push(int also_wrong) ) \" })x\";\n"
        "__global__ void push(double* x, int n) { printf(\"(%d}\", n); }\n",
        {"x", "n"}, 4);
}

TEST_CASE("extern \"C\" blocks and namespaces")
{
    check_found("extern \"C\" {\nstruct S { int a; };\n__global__ void push(S s, int n) { }\n}\n", {"s", "n"}, 3);
    check_found("namespace a { inline namespace b {\n__global__ void push(float* x) {}\n} }\n", {"x"}, 2);
}

TEST_CASE("templates, __launch_bounds__ anywhere, attributes")
{
    check_found(
        "template <typename T, int N = (3 > 2)>\n__global__ void __launch_bounds__(256, 2) push(T* x, int n) {}\n",
        {"x", "n"}, 2);
    check_found("__global__ __launch_bounds__(128) void push(double* x) {}\n", {"x"}, 1);
    check_found("__launch_bounds__(128) __global__ void push(double* x) {}\n", {"x"}, 1);
    check_found("[[nodiscard]] __global__ void push([[maybe_unused]] double* x, int n __attribute__((unused))) {}\n",
                {"x", "n"}, 1);
    check_found("__global__ void __attribute__((noinline)) push(const int n) {}\n", {"n"}, 1);
}

TEST_CASE("qualifiers, references, arrays, structs, pointers to pointers, defaults, function pointers")
{
    check_found(
        "__global__ void push(const double* __restrict__ x, volatile int* flag, const double (&m)[3][3],\n"
        "  struct Marker markers, double** rows, double * const * cols, int n = 10,\n"
        "  float w[4], void (*callback)(int, int), Array3D<double, Layout<2, 3>> b,\n"
        "  __grid_constant__ const Params p, unsigned long long count, std::size_t size = f(1, 2) < 3) {}\n",
        {"x", "flag", "m", "markers", "rows", "cols", "n", "w", "callback", "b", "p", "count", "size"}, 1);
}

TEST_CASE("braces inside the parameter list and the specifiers, and macros from other files")
{
    check_found(
        "template <typename D = identity>\n__launch_bounds__(int(N > 2 ? 256 : 128)) __global__ void push(\n"
        "    const double* x, D decomposer = {}, Options options = Options{1, {2}}, int n = [] { return 3; "
        "}())\n{\n}\n",
        {"x", "decomposer", "options", "n"}, 2);
    // An unknown macro that opens a namespace, and one that holds __global__ (not visible here).
    check_found("CUB_NAMESPACE_BEGIN\nnamespace detail {\n__global__ void push(double* x) {}\n}\nCUB_NAMESPACE_END\n",
                {"x"}, 3);
}

TEST_CASE("declarations over many lines and with line continuations")
{
    check_found("__global__\nvoid\npush\n(\n  double* x,\n\n  int n\n)\n{\n}\n", {"x", "n"}, 3);
    check_found("__global__ void pu\\\nsh(double* x, \\\n int n) {}\n", {"x", "n"}, 1);
    check_found("#define SIG double* x, \\\n    int n\n__global__ void push(SIG) {}\n", {"x", "n"}, 3);
}

TEST_CASE("kernels inside #if blocks")
{
    check_found("#ifdef USE_CUDA\n__global__ void push(double* x) {}\n#endif\n", {"x"}, 2);
    check_found("#if 0\n__global__ void push(double* old) {}\n#else\n__global__ void push(double* x) {}\n#endif\n",
                {"x"}, 4);
    check_found("#if 1\n__global__ void push(double* x) {}\n#else\n__global__ void push(double* old) {}\n#endif\n",
                {"x"}, 2);
    // The type changes with the branch, the names do not.
    check_found("__global__ void push(\n#ifdef SINGLE\n  float* x,\n#else\n  double* x,\n#endif\n  int n) {}\n",
                {"x", "n"}, 1);
    check_found("#ifdef A\n__global__ void push(float* x)\n#else\n__global__ void push(double* x)\n#endif\n{ }\n",
                {"x"}, 2);
}

TEST_CASE("object-like macros used as qualifiers and as the whole prefix")
{
    check_found(
        "#define RESTRICT __restrict__\n#define KERNEL extern \"C\" __global__\n"
        "KERNEL void push(double* RESTRICT x, int n) {}\n",
        {"x", "n"}, 3);
    check_found("#define DEVICE_ONLY\nDEVICE_ONLY __global__ void push(double* x) {}\n", {"x"}, 2);
}

TEST_CASE("the entry among other __global__ functions, prototypes, calls and launches")
{
    check_found(
        "__global__ void push_helper(int a) {}\n__device__ void push_step(double* x);\n"
        "__global__ void push(double* x, int n);\n"
        "__global__ void other(int push) { push_helper<<<1, 1>>>(push); }\n"
        "__global__ void push(double* x, int n) { other<<<1, 1>>>(n); }\n"
        "void host() { push<<<1, 32>>>(nullptr, 0); }\n",
        {"x", "n"}, 5);
    check_found("__global__ void push(double*, int);\n__global__ void push(double* x, int n) {}\n", {"x", "n"}, 2);
    check_found("__global__ void push() {}\n", {}, 1);
    check_found("__global__ void push(void) {}\n", {}, 1);
}

TEST_CASE("a prototype's names do not count once the definition is seen; prototypes alone must agree")
{
    check_found(
        "extern \"C\" __global__ void push(double* x, int n);\n"
        "extern \"C\" __global__ void push(double* y, int m) {}\n",
        {"y", "m"}, 2);
    // The definition before a later prototype, and a prototype the reader cannot read at all.
    check_found(
        "__global__ void push(double* y, int m) {}\n__global__ void push(double* x, int n);\n"
        "__global__ void push(ARRAY_ARG(x), int n);\n",
        {"y", "m"}, 1);
    check_unreadable("__global__ void push(double* x, int n);\n__global__ void push(double* x, int m);\n",
                     "conflicting declarations of 'push': line 1 takes (x, n), line 2 takes (x, m)", 2);
    // Two definitions (in #if branches) still conflict.
    check_unreadable(
        "__global__ void push(double* x);\n#ifdef A\n__global__ void push(double* a) {}\n#else\n"
        "__global__ void push(double* b) {}\n#endif\n",
        "line 3 takes (a), line 5 takes (b)", 5);
}

TEST_CASE("what cannot be read is reported with the line and why, never guessed")
{
    check_unreadable("#define KERNEL(name) extern \"C\" __global__ void name(double* x, int n)\n\nKERNEL(push) {}\n",
                     "function-like macro KERNEL (defined at line 1)", 3);
    check_unreadable("DECLARE_KERNEL(push, double* x, int n)\n", "passes it to DECLARE_KERNEL", 1);
    check_unreadable(
        "#ifdef A\n__global__ void push(double* x, int n) {}\n#else\n__global__ void push(double* y, int n) "
        "{}\n#endif\n",
        "conflicting declarations of 'push': line 2 takes (x, n), line 4 takes (y, n)", 4);
    check_unreadable("__global__ void push(double*, int n) {}\n", "parameter 1 (double*) has no name", 1);
    check_unreadable("__global__ void push(MarkerArgs) {}\n", "parameter 1 (MarkerArgs) has no name", 1);
    check_unreadable("__global__ void push(ARRAY_ARG(x), int n) {}\n", "macro call", 1);
    check_unreadable("__global__ void push(double* x, int n\n", "no closing parenthesis", 1);
    // found by libFuzzer (tests/fuzz/regressions/cuda/parameter_of_only_array_bounds)
    check_unreadable("__global__ void push([3][3], double* x) {}\n", "parameter 1 ([3][3]) has no name", 1);
    check_unreadable("#define ARGS(T) T* x, int n\n__global__ void push(ARGS(double)) {}\n", "macro call", 2);
}

TEST_CASE("no declaration at all")
{
    SignatureRead r = read("__global__ void pull(double* x) {}\n");
    CHECK(r.status == Status::not_found);
    CHECK(r.reason == "no __global__ function 'push' found in the CUDA source");
    SignatureRead device =
        read("#include \"kernel.cuh\"\n__device__ void push(double* x) {}\nCK_KERNEL void push(double* x);\n");
    CHECK(device.status == Status::not_found);
    CHECK(device.line == 2);
    CHECK(device.reason.find("this line declares 'push' without __global__") != std::string::npos);
    CHECK(read("").status == Status::not_found);
}

TEST_CASE("macro chains that grow exponentially are not expanded without bound")
{
    std::string source;
    for (int i = 0; i < 40; ++i)
        source += "#define M" + std::to_string(i + 1) + " M" + std::to_string(i) + " M" + std::to_string(i) + "\n";
    source += "__global__ void push(M40 x) {}\n";
    SignatureRead r = read(source);
    CHECK(r.status == Status::unreadable);
    CHECK(r.reason.find("expand") != std::string::npos);
}

TEST_SUITE_END();
