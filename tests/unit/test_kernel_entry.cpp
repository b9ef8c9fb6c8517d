// Template entries: reading template headers and explicit instantiations,
// choosing the entry's arguments, keying, compiling with NVRTC and nvcc, and
// typing the launch's parameters.
#include "compilers/cuda_compiler.hpp"
#include "compilers/entry_symbols.hpp"
#include "compilers/nvcc_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cuda_job/cuda_job.hpp"
#include "signatures/kernel_entry.hpp"
#include "runtime/kernel_signature.hpp"
#include "signatures/cuda_signature_reader.hpp"
#include "compile_request.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("kernel_entry");

using namespace ck;

namespace {

const std::string scale_template =
    "template <typename T, int N = 1>\n"
    "__global__ void scale(T* x, T factor, int n) { x[0] *= factor * N + n; }\n";

KernelSource scale_kernel(const test::TempTree& tree, const std::string& source)
{
    KernelSource kernel;
    kernel.name = "scale";
    kernel.module = "sim.kernels.scale";
    kernel.folder = tree / "sim/kernels/scale";
    kernel.cuda_file = tree.write("sim/kernels/scale/scale_cuda.cu", source);
    return kernel;
}

std::string error_of(const KernelSource& kernel, const Config& config, const std::string& source)
{
    try {
        kernel_entry(kernel, config, source);
    } catch (const SourceError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the reader keeps a template's parameters and the source's explicit instantiations")
{
    auto found =
        signatures::read_cuda_declaration(scale_template +
                                              "template __global__ void scale<double, 3>(double*, double, int);\n"
                                              "extern template __global__ void scale<float, 1>(float*, float, int);\n",
                                          "scale");
    REQUIRE(found.read.status == SignatureRead::Status::found);
    CHECK(found.read.parameters == std::vector<std::string>{"x", "factor", "n"});
    const auto& declaration = found.declarations[found.chosen];
    CHECK(declaration.is_template);
    REQUIRE(declaration.template_parameters.size() == 2);
    CHECK(declaration.template_parameters[0].is_type);
    CHECK(declaration.template_parameters[0].name == "T");
    CHECK_FALSE(declaration.template_parameters[1].is_type);
    CHECK(declaration.template_parameters[1].name == "N");
    CHECK(declaration.template_parameters[1].has_default);
    // `extern template` declares, it does not instantiate.
    REQUIRE(found.instantiations.size() == 1);
    CHECK(found.instantiations[0].arguments == "double, 3");
    CHECK(found.instantiations[0].line == 3);
}

TEST_CASE("template-args give the entry's name expression; the module's entry wins over the name's")
{
    test::TempTree tree;
    KernelSource kernel = scale_kernel(tree, scale_template);
    Config config;
    config.template_args["scale"] = {"double", "3"};
    KernelEntry entry = kernel_entry(kernel, config, scale_template);
    CHECK(entry.expression == "scale<double, 3>");
    CHECK(entry.template_args == std::vector<std::string>{"double", "3"});
    CHECK(entry.origin.find("template-args") != std::string::npos);
    config.template_args["sim.kernels.scale"] = {"float", "2"};
    CHECK(kernel_entry(kernel, config, scale_template).expression == "scale<float, 2>");
}

TEST_CASE("without template-args the one explicit instantiation is the entry")
{
    test::TempTree tree;
    std::string source = scale_template + "template __global__ void scale<long long, 2>(long long*, long long, int);\n";
    KernelEntry entry = kernel_entry(scale_kernel(tree, source), Config{}, source);
    CHECK(entry.expression == "scale<long long, 2>");
    CHECK(entry.template_args == std::vector<std::string>{"long long", "2"});
    CHECK(entry.origin == "the explicit instantiation at line 3");
}

TEST_CASE("a plain entry is its name and adds nothing to the key")
{
    test::TempTree tree;
    std::string source = "extern \"C\" __global__ void scale(double* x, int n) {}\n";
    KernelEntry entry = kernel_entry(scale_kernel(tree, source), Config{}, source);
    CHECK(entry.expression == "scale");
    CHECK_FALSE(entry.is_template());
}

TEST_CASE(
    "a template without arguments, several instantiations, a wrong count, or arguments for a plain kernel are errors")
{
    test::TempTree tree;
    KernelSource kernel = scale_kernel(tree, scale_template);
    std::string file = kernel.cuda_file->string();
    std::string missing = error_of(kernel, Config{}, scale_template);
    CHECK(missing.find(file + ":2: __global__ scale is a template (template <T, N>) without template arguments") == 0);
    CHECK(missing.find("template-args = { scale = [\"double\", \"1\"] }") != std::string::npos);

    std::string twice = scale_template +
                        "template __global__ void scale<double, 1>(double*, double, int);\n"
                        "template __global__ void scale<float, 1>(float*, float, int);\n";
    std::string several = error_of(kernel, Config{}, twice);
    CHECK(several.find("instantiated 2 times (scale<double, 1> (line 3), scale<float, 1> (line 4))") !=
          std::string::npos);
    CHECK(several.find("template-args") != std::string::npos);

    Config config;
    config.template_args["scale"] = {"double"};
    CHECK(error_of(kernel, config, scale_template).find("is a template with 2 parameters (T, N), but") !=
          std::string::npos);

    std::string plain = "__global__ void scale(double* x) {}\n";
    CHECK(error_of(kernel, config, plain).find(file + ":1: __global__ scale is not a template, but") == 0);
}

TEST_CASE("the template arguments are a key input: another argument is another key, a plain entry's key is unchanged")
{
    test::TempTree tree;
    KernelSource kernel = scale_kernel(tree, scale_template);
    IncludeScan scan;
    auto inputs = [&](const KernelEntry& entry) {
        return cuda_key_inputs(kernel, "0", scan, "nvrtc 13.0", "sm_90", {}, {}, entry);
    };
    KernelEntry plain{"scale", {}, ""};
    KernelEntry twice{"scale<double, 2>", {"double", "2"}, ""};
    KernelEntry thrice{"scale<double, 3>", {"double", "3"}, ""};
    CHECK_FALSE(inputs(plain).contains("template_args"));
    CHECK(inputs(plain) == cuda_key_inputs(kernel, "0", scan, "nvrtc 13.0", "sm_90", {}, {}));
    CHECK(inputs(twice)["template_args"] == nlohmann::json{"double", "2"});
    CHECK(cache_key(inputs(twice)) != cache_key(inputs(thrice)));
}

TEST_CASE("the mangled instantiation is picked by its demangled template arguments")
{
    std::vector<std::string> symbols = {"_Z5scaleIfLi1EEvPT_S0_i", "_Z5scaleIdLi3EEvPT_S0_i", "_Z6helperv"};
    CHECK(pick_template_entry_symbol(symbols, "scale", "scale<double, 3>") == "_Z5scaleIdLi3EEvPT_S0_i");
    CHECK(pick_template_entry_symbol(symbols, "scale", "scale<float, 1>") == "_Z5scaleIfLi1EEvPT_S0_i");
    // Spelled otherwise than the demangler writes it, among several: not guessed.
    CHECK(pick_template_entry_symbol(symbols, "scale", "scale<double, 0x3>").empty());
    // The only instantiation there is, however it is spelled.
    CHECK(pick_template_entry_symbol({"_Z5scaleIjEvPT_"}, "scale", "scale<unsigned>") == "_Z5scaleIjEvPT_");
    CHECK(pick_template_entry_symbol({"_Z5scalePd"}, "scale", "scale<double>").empty());
    CHECK(template_arguments_of("void scale<Pair<int, 2>, 3>(double*)", "scale") == "Pair<int,2>,3");
    CHECK(template_arguments_of("void rescale<int>(int*)", "scale").empty());
}

TEST_CASE("NVRTC and nvcc compile the instantiation and report the same lowered name")
{
    test::TempTree tree;
    CudaCompileRequest req = test::request(tree, scale_template, "sm_90");
    req.kernel = "scale";
    req.entry = "scale<double, 3>";
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    auto by_nvrtc = nvrtc.compile(req);
    REQUIRE_MESSAGE(by_nvrtc.ok, by_nvrtc.log);
    CHECK(by_nvrtc.entry_symbol == "_Z5scaleIdLi3EEvPT_S0_i");
    NvccCompiler nvcc(cuda_root_of(Config{}), nullptr);
    auto by_nvcc = nvcc.compile(req);
    REQUIRE_MESSAGE(by_nvcc.ok, by_nvcc.log);
    CHECK(by_nvcc.entry_symbol == by_nvrtc.entry_symbol);
    auto symbols = elf_function_symbols(by_nvcc.artifact);
    CHECK(std::find(symbols.begin(), symbols.end(), by_nvcc.entry_symbol) != symbols.end());
    req.target = "compute_90";
    auto ptx = nvcc.compile(req);
    REQUIRE_MESSAGE(ptx.ok, ptx.log);
    CHECK(ptx.entry_symbol == by_nvrtc.entry_symbol);
}

TEST_CASE("template arguments that do not fit are a compile error naming the entry")
{
    test::TempTree tree;
    CudaCompileRequest req = test::request(tree, scale_template, "sm_90");
    req.kernel = "scale";
    req.entry = "scale<NoSuchType>";
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    auto output = nvrtc.compile(req);
    CHECK_FALSE(output.ok);
    CHECK(output.log.find("scale<NoSuchType>") != std::string::npos);
    NvccCompiler nvcc(cuda_root_of(Config{}), nullptr);
    auto by_nvcc = nvcc.compile(req);
    CHECK_FALSE(by_nvcc.ok);
    CHECK(by_nvcc.log.find("NoSuchType") != std::string::npos);
}

TEST_CASE("the launch types a template's parameters with its arguments substituted")
{
    auto p = read_global_signature(scale_template, "scale", "scale_cuda.cu", {"float", "2"}).parameters;
    REQUIRE(p.size() == 3);
    CHECK(p[0].kind == ParameterKind::pointer);
    CHECK(p[0].element == ElementType::float32);
    CHECK(p[1].kind == ParameterKind::scalar);
    CHECK(p[1].element == ElementType::float32);
    CHECK(p[2].element == ElementType::int32);
    auto views =
        read_global_signature("template <class E>\n__global__ void v(Array2D<E> a, const E* __restrict__ b) {}\n", "v",
                              "v_cuda.cu", {"unsigned long long"})
            .parameters;
    REQUIRE(views.size() == 2);
    CHECK(views[0].kind == ParameterKind::array_view);
    CHECK(views[0].element == ElementType::uint64);
    CHECK(views[1].element == ElementType::uint64);
    CHECK_THROWS_WITH_AS(
        read_global_signature(scale_template, "scale", "scale_cuda.cu"),
        doctest::Contains("scale_cuda.cu:2: __global__ scale is a template without template arguments"), SourceError);
}

TEST_SUITE_END();
