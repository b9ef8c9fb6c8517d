// The compilers against the CUDA toolkit this project builds with (NVRTC and
// nvcc need no GPU).
#include "compilers/cuda_compiler.hpp"
#include "compilers/entry_symbols.hpp"
#include "compilers/nvcc_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
#include "compilers/tool_probe.hpp"
#include "compile_request.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("nvrtc_compiler");

using namespace ck;

using test::extern_c_kernel;
using test::request;

TEST_CASE("NVRTC builds a cubin with the entry and reports its identity")
{
    test::TempTree tree;
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    CHECK(nvrtc.identity().rfind("nvrtc ", 0) == 0);
    auto output = nvrtc.compile(request(tree, extern_c_kernel, "sm_90"));
    REQUIRE_MESSAGE(output.ok, output.log);
    CHECK(output.entry_symbol == "push");
    CHECK(output.artifact.rfind("\x7f" "ELF", 0) == 0);
    auto symbols = elf_function_symbols(output.artifact);
    CHECK(std::find(symbols.begin(), symbols.end(), "push") != symbols.end());
}

TEST_CASE("NVRTC builds PTX for compute_XX and lowers C++ names")
{
    test::TempTree tree;
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    auto output = nvrtc.compile(request(tree, "__global__ void push(double* x, long long n) { x[0] = n; }\n", "compute_90"));
    REQUIRE_MESSAGE(output.ok, output.log);
    CHECK(output.entry_symbol.rfind("_Z4push", 0) == 0);
    CHECK(output.artifact.find(".entry " + output.entry_symbol) != std::string::npos);
}

TEST_CASE("a compile error is a failed output with file:line diagnostics")
{
    test::TempTree tree;
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    auto req = request(tree, "extern \"C\" __global__ void push(double* x)\n{\n  x[0] = undefined_name;\n}\n", "sm_90");
    auto output = nvrtc.compile(req);
    CHECK_FALSE(output.ok);
    CHECK(output.log.find(req.source_file.string() + ":3:") != std::string::npos);
    CHECK(output.log.find("undefined_name") != std::string::npos);
}

TEST_CASE("the identity is remembered by the probe")
{
    test::TempTree tree;
    ToolProbe probe(tree / "probes");
    NvrtcCompiler first(cuda_root_of(Config{}), &probe);
    std::string identity = first.identity();
    NvrtcCompiler second(cuda_root_of(Config{}), &probe);
    CHECK(second.identity() == identity);
    CHECK(std::distance(std::filesystem::directory_iterator(tree / "probes"), {}) == 1);
}

TEST_CASE("nvcc builds the same kernel and finds the entry symbol")
{
    test::TempTree tree;
    NvccCompiler nvcc(cuda_root_of(Config{}), nullptr);
    CHECK(nvcc.identity().rfind("nvcc ", 0) == 0);
    auto cubin = nvcc.compile(request(tree, extern_c_kernel, "sm_80"));
    REQUIRE_MESSAGE(cubin.ok, cubin.log);
    CHECK(cubin.entry_symbol == "push");
    auto ptx = nvcc.compile(request(tree, "__global__ void push(double* x, long long n) { x[0] = n; }\n", "compute_90"));
    REQUIRE_MESSAGE(ptx.ok, ptx.log);
    CHECK(ptx.entry_symbol.rfind("_Z4push", 0) == 0);
    auto broken = request(tree, "__global__ void push(double* x) { x[0] = nope; }\n", "sm_90");
    auto failed = nvcc.compile(broken);
    CHECK_FALSE(failed.ok);
    CHECK(failed.log.find(broken.source_file.string() + ":1:") != std::string::npos);
}

TEST_SUITE_END();
