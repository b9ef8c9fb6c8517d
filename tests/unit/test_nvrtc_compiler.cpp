// The compilers against the CUDA toolkit this project builds with (NVRTC and
// nvcc need no GPU).
#include "compilers/cuda_compiler.hpp"
#include "compilers/cuda_elf.hpp"
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
    CHECK(output.artifact.rfind("\x7f"
                                "ELF",
                                0) == 0);
    auto symbols = elf_function_symbols(output.artifact);
    CHECK(std::find(symbols.begin(), symbols.end(), "push") != symbols.end());
}

TEST_CASE("NVRTC builds PTX for compute_XX and lowers C++ names")
{
    test::TempTree tree;
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    auto output =
        nvrtc.compile(request(tree, "__global__ void push(double* x, long long n) { x[0] = n; }\n", "compute_90"));
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
    CHECK(second.remembered_identity() == identity);
    // NVRTC's alone: the toolkit's ptxas, which may assemble the build's cubins, makes the same code.
    CHECK(identity.find("ptxas") == std::string::npos);
    CHECK(std::distance(std::filesystem::directory_iterator(tree / "probes"), {}) == 1);
}

namespace {

// The bytes of the ELF64 section `name`, or "" when there is none: enough
// of the format to compare two cubins' machine code.
std::string elf_section(const std::string& elf, const std::string& name)
{
    auto read = [&](std::size_t at, std::size_t size) {
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < size; ++i)
            value |= std::uint64_t(static_cast<unsigned char>(elf.at(at + i))) << (8 * i);
        return static_cast<std::size_t>(value);
    };
    std::size_t table = read(0x28, 8), entry_size = read(0x3a, 2), count = read(0x3c, 2), names = read(0x3e, 2);
    std::size_t names_offset = read(table + names * entry_size + 0x18, 8);
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t header = table + i * entry_size;
        if (elf.c_str() + names_offset + read(header, 4) == name)
            return elf.substr(read(header + 0x18, 8), read(header + 0x20, 8));
    }
    return "";
}

// A toolkit folder with NVRTC and the headers, and `ptxas` as bin/ptxas
// (none when empty): NVRTC then assembles its cubins itself, unless it is
// NVRTC's own ptxas.
std::filesystem::path toolkit_with(const test::TempTree& tree, const std::string& ptxas = "")
{
    auto root = tree / ("toolkit" + std::to_string(std::hash<std::string>{}(ptxas)));
    std::filesystem::create_directories(root / "bin");
    auto real = cuda_root_of(Config{});
    for (const char* folder : {"lib64", "include"})
        std::filesystem::create_directory_symlink(real / folder, root / folder);
    if (!ptxas.empty()) {
        tree.write((root / "bin" / "ptxas").lexically_relative(tree.root()).string(), ptxas);
        std::filesystem::permissions(root / "bin" / "ptxas", std::filesystem::perms::owner_all);
    }
    return root;
}

const std::string math_kernel =
    "extern \"C\" __global__ void push(double* x, long long n)\n"
    "{ long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = sin(x[i]) / (1.0 + x[i] * x[i]); }\n";

}  // namespace

TEST_CASE("NVRTC's PTX assembled by ptxas has the machine code of NVRTC's own cubin")
{
    test::TempTree tree;
    NvrtcCompiler split(cuda_root_of(Config{}), nullptr);
    NvrtcCompiler whole(toolkit_with(tree), nullptr);
    auto req = request(tree, math_kernel, "sm_90");
    REQUIRE(split.assembles_separately(req));
    REQUIRE_FALSE(whole.assembles_separately(req));
    // One key for both: the machine code does not depend on which made it.
    CHECK(whole.identity() == split.identity());
    auto outputs = split.compile_targets(req, {"sm_80", "sm_90", "compute_90"});
    REQUIRE(outputs.size() == 3);
    for (const auto& output : outputs) REQUIRE_MESSAGE(output.ok, output.log);
    for (std::size_t i = 0; i < 2; ++i) {
        req.target = i == 0 ? "sm_80" : "sm_90";
        auto direct = whole.compile(req);
        REQUIRE_MESSAGE(direct.ok, direct.log);
        CHECK(direct.phases.count("front_end_and_ptxas") == 1);
        std::string code = elf_section(outputs[i].artifact, ".text.push");
        CHECK(code.size() > 100);
        CHECK(code == elf_section(direct.artifact, ".text.push"));
        CHECK(elf_section(outputs[i].artifact, ".nv.info.push") == elf_section(direct.artifact, ".nv.info.push"));
        CHECK(outputs[i].entry_symbol == "push");
        CHECK(outputs[i].phases.count("front_end") == 1);
        CHECK(outputs[i].phases.count("ptxas") == 1);
    }
    // The sm_90 cubin is assembled from the very PTX published for compute_90.
    CHECK(outputs[2].artifact.find(".target sm_90") != std::string::npos);
    CHECK(outputs[2].phases.at("front_end") == outputs[1].phases.at("front_end"));
}

TEST_CASE("NVRTC groups targets by virtual architecture only when ptxas would make the same cubin")
{
    test::TempTree tree;
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    auto req = request(tree, extern_c_kernel, "sm_90");
    using Groups = std::vector<std::vector<std::string>>;
    std::vector<std::string> targets = {"sm_80", "sm_90", "compute_90", "sm_90a"};
    CHECK(nvrtc.target_groups(req, targets) == Groups{{"sm_80"}, {"sm_90", "compute_90"}, {"sm_90a"}});
    req.options = {"-DN=3", "-UM", "-std=c++17", "-default-device", "-w", "-diag-suppress=177"};
    CHECK(nvrtc.target_groups(req, targets).size() == 3);
    // Options NVRTC may hand its own assembler: one whole NVRTC run per target.
    for (std::string option : {"-lineinfo", "-G", "-maxrregcount=32", "-Xptxas=-v", "--use_fast_math", "-fmad=false"}) {
        req.options = {"-DN=3", option};
        CAPTURE(option);
        CHECK_FALSE(nvrtc.assembles_separately(req));
        CHECK(nvrtc.target_groups(req, targets) == Groups{{"sm_80"}, {"sm_90"}, {"compute_90"}, {"sm_90a"}});
    }
    NvrtcCompiler whole(toolkit_with(tree), nullptr);
    req.options = {};
    CHECK(whole.target_groups(req, targets).size() == 4);
    // A ptxas of another toolkit build, or one that cannot say which, is not NVRTC's assembler.
    std::string real = (cuda_root_of(Config{}) / "bin" / "ptxas").string();
    for (std::string version :
         {"Cuda compilation tools, release 13.0, V13.0.1\nBuild cuda_13.0.r13.0/compiler.1_0", "", "garbage"}) {
        std::string script = "#!/bin/sh\nif [ \"$1\" = --version ]; then printf '%s\\n' '" + version +
                             "'; exit 0; fi\nexec " + real + " \"$@\"\n";
        NvrtcCompiler other(toolkit_with(tree, script), nullptr);
        CAPTURE(version);
        CHECK_FALSE(other.assembles_separately(req));
        CHECK(other.target_groups(req, targets).size() == 4);
        auto outputs = other.compile_targets(req, {"sm_90", "compute_90"});
        for (const auto& output : outputs) CHECK_MESSAGE(output.ok, output.log);
        CHECK(outputs[0].phases.count("front_end_and_ptxas") == 1);
    }
    // A ptxas that fails its --version: NVRTC alone, never a failed build.
    NvrtcCompiler broken(toolkit_with(tree, "#!/bin/sh\nexit 3\n"), nullptr);
    CHECK_FALSE(broken.assembles_separately(req));
}

TEST_CASE("a compile error in a group fails every target of that virtual architecture")
{
    test::TempTree tree;
    NvrtcCompiler nvrtc(cuda_root_of(Config{}), nullptr);
    auto req = request(tree, "extern \"C\" __global__ void push(double* x)\n{\n  x[0] = undefined_name;\n}\n", "sm_90");
    auto outputs = nvrtc.compile_targets(req, {"sm_90", "compute_90"});
    REQUIRE(outputs.size() == 2);
    for (const auto& output : outputs) {
        CHECK_FALSE(output.ok);
        CHECK(output.log.find(req.source_file.string() + ":3:") != std::string::npos);
    }
}

TEST_CASE("nvcc builds the same kernel and finds the entry symbol")
{
    test::TempTree tree;
    NvccCompiler nvcc(cuda_root_of(Config{}), nullptr);
    CHECK(nvcc.identity().rfind("nvcc ", 0) == 0);
    auto cubin = nvcc.compile(request(tree, extern_c_kernel, "sm_80"));
    REQUIRE_MESSAGE(cubin.ok, cubin.log);
    CHECK(cubin.entry_symbol == "push");
    auto ptx =
        nvcc.compile(request(tree, "__global__ void push(double* x, long long n) { x[0] = n; }\n", "compute_90"));
    REQUIRE_MESSAGE(ptx.ok, ptx.log);
    CHECK(ptx.entry_symbol.rfind("_Z4push", 0) == 0);
    auto broken = request(tree, "__global__ void push(double* x) { x[0] = nope; }\n", "sm_90");
    auto failed = nvcc.compile(broken);
    CHECK_FALSE(failed.ok);
    CHECK(failed.log.find(broken.source_file.string() + ":1:") != std::string::npos);
}

TEST_CASE("nvcc compiles all targets in one run, each artifact found through its --time list")
{
    test::TempTree tree;
    NvccCompiler nvcc(cuda_root_of(Config{}), nullptr);
    auto req = request(tree, math_kernel, "sm_90");
    std::vector<std::string> targets = {"sm_80", "sm_90", "compute_90"};
    CHECK(nvcc.target_groups(req, targets) == std::vector<std::vector<std::string>>{targets});
    auto outputs = nvcc.compile_targets(req, targets);
    REQUIRE(outputs.size() == 3);
    for (const auto& output : outputs) {
        REQUIRE_MESSAGE(output.ok, output.log);
        CHECK(output.entry_symbol == "push");
        CHECK(output.phases.count("front_end") == 1);
    }
    for (std::size_t i = 0; i < 2; ++i) {
        auto header = read_elf_header(outputs[i].artifact);
        REQUIRE(header);
        CHECK(cuda_elf_sm(*header) == (i == 0 ? 80 : 90));
        CHECK(outputs[i].phases.count("ptxas") == 1);
        // The same machine code as a compile of that target alone.
        req.target = targets[i];
        auto alone = nvcc.compile(req);
        REQUIRE_MESSAGE(alone.ok, alone.log);
        CHECK(elf_section(outputs[i].artifact, ".text.push") == elf_section(alone.artifact, ".text.push"));
    }
    CHECK(outputs[2].artifact.find(".target sm_90") != std::string::npos);
    CHECK(outputs[2].phases.count("ptxas") == 0);
}

TEST_CASE("nvcc's --time list is read by column")
{
    std::string csv =
        "source file name , phase name , phase input files , phase output file , arch , tool, metric , unit\n"
        "k.cu , gcc (preprocessing 1) , k.cu  , keep/k.compute_90.cpp1.ii , compute_90 , nvcc , 84.2650 , ms\n"
        "k.cu , cicc , keep/k.compute_90.cpp1.ii  , keep/k.compute_90.ptx , compute_90 , nvcc , 556.3030 , ms\n"
        "k.cu , ptxas , keep/k.compute_90.ptx  , keep/k.compute_90.sm_90.cubin , sm_90 , nvcc , 31.2720 , ms\n"
        "k.cu , fatbinary , keep/k.compute_90.ptx keep/k.compute_90.sm_90.cubin  , k.fatbin ,  , nvcc , 1.9850 , ms\n"
        "a row that is not one\n";
    auto phases = parse_nvcc_phase_times(csv);
    REQUIRE(phases.size() == 4);
    CHECK(phases[1].name == "cicc");
    CHECK(phases[1].output == "keep/k.compute_90.ptx");
    CHECK(phases[1].architecture == "compute_90");
    CHECK(phases[1].seconds == doctest::Approx(0.556303));
    CHECK(phases[2].architecture == "sm_90");
    CHECK(phases[3].architecture.empty());
    CHECK(parse_nvcc_phase_times("").empty());
}

TEST_SUITE_END();
