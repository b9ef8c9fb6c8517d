// The key covers every input that can change an artifact, and nothing else.
#include "cuda_job/cuda_job.hpp"
#include "explain/input_change.hpp"
#include "source/include_scanner.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"
#include "temp_tree.hpp"
#include "util/file_util.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("cache_key");

using namespace ck;
namespace fs = std::filesystem;

namespace {

struct KeyFixture {
    test::TempTree tree;
    Config config;
    std::string compiler = "nvrtc 13.0 (libnvrtc.so.13, 1 bytes)";
    std::string target = "sm_90";
    std::optional<fs::path> cunumpy_dir;

    KeyFixture()
    {
        tree.write("src/sim/__init__.py", "");
        tree.write("src/sim/kernels/__init__.py", "");
        tree.write("src/sim/kernels/common.cuh",
                   "#include \"detail.cuh\"\n__device__ inline double twice(double x) { return 2 * x; }\n");
        tree.write("src/sim/kernels/detail.cuh", "#define DETAIL 1\n");
        tree.kernel("src/sim/kernels", "push",
                    "#include \"sim/kernels/common.cuh\"\n"
                    "#include <cunumpy/atomic.cuh>\n"
                    "// #include \"commented_out.cuh\"\n"
                    "extern \"C\" __global__ void push(double* x, long n) { x[0] = twice(x[0]); }\n");
        tree.write("cunumpy/cuda/include/cunumpy/atomic.cuh", "// atomics\n");
        cunumpy_dir = tree / "cunumpy/cuda/include";
    }

    nlohmann::json inputs(const fs::path& root) const
    {
        auto kernels = find_kernels({root / "src"}, config);
        REQUIRE(kernels.size() == 1);
        const KernelSource& kernel = kernels[0];
        std::string source = util::read_file(*kernel.cuda_file);
        auto late = cunumpy_dir ? std::optional<fs::path>(root / "cunumpy/cuda/include") : std::nullopt;
        IncludeScanner scanner([late] { return late; });
        IncludeSearch search;
        search.dirs = {{kernel.folder, "<kernel>"}, {kernel.source_root, ""}};
        IncludeScan scan = scanner.scan(*kernel.cuda_file, source, search);
        return cuda_key_inputs(kernel, sha256_hex(source), scan, compiler, target, config.options);
    }

    std::string key() const { return cache_key(inputs(tree.root())); }
};

}  // namespace

TEST_CASE("the key's inputs name the source, every header transitively, compiler, target and options")
{
    KeyFixture f;
    auto inputs = f.inputs(f.tree.root());
    CHECK(inputs["kernel"] == "push");
    CHECK(inputs["source"]["file"] == "push_cuda.cu");
    CHECK(inputs["headers"].size() == 3);
    CHECK(inputs["headers"].contains("sim/kernels/common.cuh"));
    CHECK(inputs["headers"].contains("sim/kernels/detail.cuh"));
    CHECK(inputs["headers"].contains("<cunumpy>/cunumpy/atomic.cuh"));
    CHECK(inputs["compiler"] == f.compiler);
    CHECK(inputs["target"] == "sm_90");
    CHECK_FALSE(inputs.contains("unresolved_includes"));
    CHECK(inputs.dump().find(f.tree.root().string()) == std::string::npos);
}

TEST_CASE("moving the package keeps the key: a second checkout hits")
{
    KeyFixture f;
    std::string before = f.key();
    test::TempTree elsewhere;
    fs::copy(f.tree.root(), elsewhere / "checkout", fs::copy_options::recursive);
    CHECK(cache_key(f.inputs(elsewhere / "checkout")) == before);
}

TEST_CASE("timestamps do not change the key")
{
    KeyFixture f;
    std::string before = f.key();
    fs::last_write_time(f.tree / "src/sim/kernels/common.cuh",
                        fs::file_time_type::clock::now() - std::chrono::hours(5));
    CHECK(f.key() == before);
}

TEST_CASE("each input changes the key")
{
    KeyFixture f;
    std::string base = f.key();

    SUBCASE("the kernel source")
    {
        f.tree.write("src/sim/kernels/push/push_cuda.cu", "extern \"C\" __global__ void push(double* x, long n) {}\n");
    }
    SUBCASE("a directly included header")
    {
        f.tree.write("src/sim/kernels/common.cuh", "#include \"detail.cuh\"\n// edited\n");
    }
    SUBCASE("a transitively included header") { f.tree.write("src/sim/kernels/detail.cuh", "#define DETAIL 2\n"); }
    SUBCASE("a header in cunumpy's folder")
    {
        f.tree.write("cunumpy/cuda/include/cunumpy/atomic.cuh", "// atomics v2\n");
    }
    SUBCASE("the compiler's version") { f.compiler = "nvrtc 13.1 (libnvrtc.so.13, 2 bytes)"; }
    SUBCASE("the target") { f.target = "sm_80"; }
    SUBCASE("an option") { f.config.options = {"-DNDEBUG"}; }
    SUBCASE("cunumpy's header folder disappearing") { f.cunumpy_dir.reset(); }
    CHECK(f.key() != base);
}

TEST_CASE("a commented-out include is not an input")
{
    KeyFixture f;
    std::string base = f.key();
    f.tree.write("src/sim/kernels/push/commented_out.cuh", "anything\n");
    CHECK(f.key() == base);
}

TEST_CASE("an unresolved quoted include fails with file:line and the folders searched")
{
    KeyFixture f;
    f.tree.write("src/sim/kernels/push/push_cuda.cu", "\n#include \"missing.cuh\"\n__global__ void push() {}\n");
    CHECK_THROWS_WITH_AS(
        f.inputs(f.tree.root()),
        doctest::Contains("push_cuda.cu:2: error: #include \"missing.cuh\" not found (the scan follows"), SourceError);
}

TEST_CASE("list_includes skips comments and reads both forms")
{
    auto includes = list_includes(
                        "#include \"a.cuh\"\n  #  include <b/c.cuh>\n/* #include \"x.cuh\" */\n// #include \"y.cuh\"\n"
                        "const char* s = \"#include \\\"z.cuh\\\"\";\n")
                        .includes;
    REQUIRE(includes.size() == 2);
    CHECK(includes[0].name == "a.cuh");
    CHECK(includes[0].quoted);
    CHECK(includes[1].name == "b/c.cuh");
    CHECK_FALSE(includes[1].quoted);
}

TEST_CASE("a computed include is recorded with the header it names, which is keyed")
{
    KeyFixture f;
    f.tree.write("src/sim/kernels/push/m.cuh", "// m\n");
    f.tree.write("src/sim/kernels/push/push_cuda.cu",
                 "#define HDR \"m.cuh\"\n#include HDR\n__global__ void push() {}\n");
    auto inputs = f.inputs(f.tree.root());
    CHECK(inputs["computed_includes"] == nlohmann::json::array({"push_cuda.cu:2: #include HDR -> \"m.cuh\""}));
    CHECK(inputs["headers"].contains("<kernel>/m.cuh"));
    CHECK(list_includes("#include_next <x>\n# include <y>\n").computed.empty());
}

TEST_CASE("targets: each arch, then PTX of the newest")
{
    Config config;
    CHECK(cuda_targets(config) == std::vector<std::string>{"sm_80", "sm_90", "compute_90"});
    config.architectures = {"sm_80", "sm_90a"};
    CHECK(cuda_targets(config) == std::vector<std::string>{"sm_80", "sm_90a", "compute_90"});
    config.architectures = {"sm_90", "sm_100", "sm_90"};
    CHECK(cuda_targets(config) == std::vector<std::string>{"sm_90", "sm_100", "compute_100"});
    config.ptx = false;
    CHECK(cuda_targets(config) == std::vector<std::string>{"sm_90", "sm_100"});
}

TEST_CASE("describe_input_change names the changed input")
{
    nlohmann::json before = {{"source", {{"file", "push_cuda.cu"}, {"sha256", "a"}}},
                             {"headers", {{"sim/common.cuh", "1"}}},
                             {"compiler", "nvrtc 12.4"},
                             {"options", nlohmann::json::array()}};
    auto after = before;
    CHECK(describe_input_change(before, after).empty());
    after["headers"]["sim/common.cuh"] = "2";
    CHECK(describe_input_change(before, after) == "header sim/common.cuh changed");
    after = before;
    after["compiler"] = "nvrtc 13.0";
    CHECK(describe_input_change(before, after) == "compiler: nvrtc 12.4 -> nvrtc 13.0");
    // nvcc's identity holds its host compiler: the part that changed is named whole.
    before["compiler"] = "nvcc Build cuda_13.0.r13.0/compiler.36424714_0; host gcc (Debian 12.2.0-14+deb12u1) 12.2.0";
    after["compiler"] = "nvcc Build cuda_13.0.r13.0/compiler.36424714_0; host gcc (fake) 99.0";
    CHECK(describe_input_change(before, after) ==
          "host compiler: gcc (Debian 12.2.0-14+deb12u1) 12.2.0 -> gcc (fake) 99.0");
    after["compiler"] = "nvcc Build cuda_13.1; host gcc (Debian 12.2.0-14+deb12u1) 12.2.0";
    CHECK(describe_input_change(before, after) ==
          "compiler: nvcc Build cuda_13.0.r13.0/compiler.36424714_0 -> nvcc Build cuda_13.1");
    // Each part ends in its file's digest: a content change with the same
    // version names the digests; another version names the versions only.
    before["compiler"] = "nvcc V13 (sha256 aa, a script running sha256 bb); host gcc 12 (sha256 cc)";
    after["compiler"] = "nvcc V13 (sha256 dd, a script running sha256 bb); host gcc 12 (sha256 cc)";
    CHECK(describe_input_change(before, after) ==
          "compiler: nvcc V13, its file's content changed (sha256 aa, a script running sha256 bb -> sha256 dd, a "
          "script running sha256 bb)");
    after["compiler"] = "nvcc V13 (sha256 aa, a script running sha256 bb); host gcc 12 (sha256 ee)";
    CHECK(describe_input_change(before, after) ==
          "host compiler: gcc 12, its file's content changed (sha256 cc -> sha256 ee)");
    after["compiler"] = "nvcc V13 (sha256 aa, a script running sha256 bb); host gcc 13 (sha256 ee)";
    CHECK(describe_input_change(before, after) == "host compiler: gcc 12 -> gcc 13");
    after = before;
    after["source"]["sha256"] = "b";
    CHECK(describe_input_change(before, after) == "source push_cuda.cu changed");
    after = before;
    after["options"] = {"-DNDEBUG"};
    CHECK(describe_input_change(before, after) == "compiler option -DNDEBUG added");
    after = before;
    after["headers"]["sim/new.cuh"] = "3";
    CHECK(describe_input_change(before, after) == "header sim/new.cuh is newly included");
}

TEST_CASE("sha256 of known vectors")
{
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_SUITE_END();
