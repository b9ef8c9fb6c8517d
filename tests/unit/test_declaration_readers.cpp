// One reader: check-signatures (read_cuda_signature) and the runtime's launch
// checks (read_global_signature) read every form of `__global__` declaration
// alike, because both go through lib/signatures.
#include "cunumpy_kernels/error.hpp"
#include "signatures/signatures.hpp"

#include "runtime/argument_packer.hpp"
#include "runtime/kernel_signature.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace ck;

namespace {

struct Form {
    const char* what;
    std::string source;
    bool readable;  ///< both paths read it (else both refuse it)
};

const std::vector<Form>& forms()
{
    static const std::vector<Form> table = {
        {"plain", "__global__ void k(double* x, int n) {}\n", true},
        {"stale same-arity prototype in #if 0",
         "#if 0\n__global__ void k(float* x, int n);\n#endif\n__global__ void k(double* x, int n) {}\n", true},
        {"stale definition in #if 0 with other names",
         "#if 0\n__global__ void k(float* y, int m) {}\n#endif\n__global__ void k(double* x, int n) {}\n", true},
        {"declaration inside a string literal",
         "const char* doc = \"__global__ void k(float* x, int n) {}\";\n"
         "__global__ void k(double* x, int n) {}\n",
         true},
        {"declaration inside a raw string and a comment",
         "auto doc = R\"(__global__ void k(float* y) {})\";\n// __global__ void k(float* z)\n"
         "__global__ void k(double* x, int n) {}\n",
         true},
        {"macro __global__", "#define KERNEL extern \"C\" __global__\nKERNEL void k(double* x, int n) {}\n", true},
        {"__restrict__ macro", "#define RESTRICT __restrict__\n__global__ void k(const double* RESTRICT x, int n) {}\n",
         true},
        {"__launch_bounds__ before the name", "__global__ void __launch_bounds__(256, 2) k(double* x, int n) {}\n",
         true},
        {"__launch_bounds__ before void",
         "extern \"C\" __global__ __launch_bounds__(128) void k(double* x, int n) {}\n", true},
        {"attributes", "__global__ void k(double* x __attribute__((unused)), [[maybe_unused]] int n) {}\n", true},
        {"default argument", "__global__ void k(double* x, int n = 4) {}\n", true},
        {"prototype without names, then the definition",
         "__global__ void k(double*, int);\n__global__ void k(double* x, int n) {}\n", true},
        {"views and a struct", "__global__ void k(Array2D<const double> x, __grid_constant__ const Markers n) {}\n",
         true},
        {"function-like macro",
         "#define KERNEL(name, ...) __global__ void name(__VA_ARGS__)\nKERNEL(k, double* x) {}\n", false},
        {"two #ifdef branches with other names",
         "#ifdef FAST\n__global__ void k(double* x) {}\n#else\n__global__ void k(double* y) {}\n#endif\n", false},
        {"no declaration", "__global__ void other(double* x) {}\n", false},
    };
    return table;
}

std::vector<std::string> names(const std::vector<KernelParameter>& parameters)
{
    std::vector<std::string> out;
    for (const auto& p : parameters) out.push_back(p.name);
    return out;
}

}  // namespace

TEST_SUITE("declaration_readers")
{
    TEST_CASE("check-signatures and the runtime read every form alike")
    {
        for (const auto& form : forms()) {
            CAPTURE(form.what);
            SignatureRead check = read_cuda_signature(form.source, "k");
            CHECK((check.status == SignatureRead::Status::found) == form.readable);
            if (check.status == SignatureRead::Status::found) {
                GlobalSignature runtime = read_global_signature(form.source, "k", "k_cuda.cu");
                CHECK(names(runtime.parameters) == check.parameters);
                CHECK(runtime.line == check.line);
            } else {
                // The runtime refuses it with check-signatures' own reason.
                CHECK_THROWS_WITH_AS(read_global_signature(form.source, "k", "k_cuda.cu"),
                                     doctest::Contains(check.reason.c_str()), SourceError);
            }
        }
    }

    TEST_CASE("the runtime types the declaration the compiler compiles")
    {
        for (const auto& form : forms()) {
            if (!form.readable || form.source.find("Array2D") != std::string::npos) continue;
            CAPTURE(form.what);
            auto p = read_global_signature(form.source, "k", "k_cuda.cu").parameters;
            REQUIRE(p.size() == 2);
            CHECK(p[0].kind == ParameterKind::pointer);
            CHECK(p[0].element == ElementType::float64);
            CHECK(p[1].kind == ParameterKind::scalar);
            CHECK(p[1].element == ElementType::int32);
        }
        auto views = read_global_signature(forms()[12].source, "k", "k_cuda.cu").parameters;
        CHECK(views[0].kind == ParameterKind::array_view);
        CHECK(views[1].kind == ParameterKind::structure);
        CHECK(views[1].ctype == "Markers");
    }

    TEST_CASE("a float array does not pass for a kernel that reads doubles behind a stale prototype")
    {
        ArgumentPacker packer("k", read_global_signature(forms()[1].source, "k", "k_cuda.cu").parameters);
        float device[4] = {};
        std::int64_t shape[] = {4};
        std::vector<Argument> args = {Argument(make_array_view(device, ElementType::float32, shape, Memory::device)),
                                      Argument(4)};
        CHECK_THROWS_WITH_AS(packer.check(args), doctest::Contains("float64"), ArgumentError);
    }

    TEST_CASE("definitions in two #if branches with one set of names but other types are refused")
    {
        std::string source =
            "#ifdef SINGLE\n__global__ void k(float* x) {}\n#else\n__global__ void k(double* x) {}\n"
            "#endif\n";
        CHECK(read_cuda_signature(source, "k").status == SignatureRead::Status::found);
        CHECK_THROWS_WITH_AS(read_global_signature(source, "k", "k_cuda.cu"),
                             doctest::Contains("other parameter types"), SourceError);
        std::string same =
            "#ifdef FAST\n__global__ void k(const double* __restrict__ x) {}\n#else\n"
            "__global__ void k(const double* x) {}\n#endif\n";
        CHECK(read_global_signature(same, "k", "k_cuda.cu").parameters.size() == 1);
    }
}
