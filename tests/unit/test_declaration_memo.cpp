// The runtime's declaration readings, kept from the catalog's open for the
// first call's key: taken again only while the source text and every header
// the reading opened are the same, checked at every ask.
#include "source/source_record.hpp"
#include "source/include_scanner.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "runtime/artifact_cache.hpp"
#include "runtime/cuda_kernel.hpp"
#include "signatures/declaration_memo.hpp"

#include "fake_cuda_driver.hpp"
#include "runtime_package.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fstream>

TEST_SUITE_BEGIN("declaration_memo");

using namespace ck;
namespace fs = std::filesystem;
using Names = std::vector<std::string>;

namespace {

struct Fixture {
    Fixture()
    {
        kernel.name = "push";
        kernel.module = "sim.push";
        kernel.folder = tree / "sim/push";
        kernel.source_root = tree.root();
        kernel.cuda_file = tree.write("sim/push/push_cuda.cu", source);
    }

    Names read() { return signatures::reduced(memo.read(kernel, Config{}, source)).read.parameters; }
    Names get() { return memo.get(kernel, Config{}, source).read.parameters; }

    test::TempTree tree;
    fs::path header = tree.write("common.cuh", "#define KERNEL __global__ void\n");
    std::string source = "#include \"common.cuh\"\n#include \"extra.cuh\"\nKERNEL push(double* x, int n) {}\n";
    KernelSource kernel;
    SourceRecord record{std::nullopt};
    signatures::DeclarationMemo memo{[this](const std::string& path) { return record.digest(path); }};
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a kept reading is taken again while source and headers are the same")
{
    CHECK(read() == Names{"x", "n"});
    CHECK(get() == Names{"x", "n"});
    CHECK(get() == Names{"x", "n"});
    CHECK(memo.readings() == 0);

    SUBCASE("the header's content changes")
    {
        std::ofstream(header, std::ios::binary) << "#define KERNEL __global__ void\n#define n count\n";
        CHECK(get() == Names{"x", "count"});
        CHECK(memo.readings() == 1);
        CHECK(get() == Names{"x", "count"});  // the new reading is kept
        CHECK(memo.readings() == 1);
    }
    SUBCASE("a header of the same name appears earlier in the search")
    {
        tree.write("sim/push/common.cuh", "#define KERNEL __global__ void\n#define x first\n");
        CHECK(get() == Names{"first", "n"});
    }
    SUBCASE("a header that was missing appears")
    {
        tree.write("extra.cuh", "#define n count\n");
        CHECK(get() == Names{"x", "count"});
    }
    SUBCASE("a header becomes a link to another file")
    {
        fs::path other = tree.write("other.cuh", "#define KERNEL __global__ void\n#define x linked\n");
        fs::remove(header);
        fs::create_symlink(other, header);
        CHECK(get() == Names{"linked", "n"});
    }
    SUBCASE("a header is removed")
    {
        fs::remove(header);
        CHECK(memo.get(kernel, Config{}, source).read.status != SignatureRead::Status::found);
    }
    SUBCASE("the source changes")
    {
        source = "#include \"common.cuh\"\nKERNEL push(double* y, int n) {}\n";
        CHECK(get() == Names{"y", "n"});
    }
    SUBCASE("another configuration's folders keep their own reading")
    {
        tree.write("include/extra.cuh", "#define n count\n");
        Config config;
        config.include_dirs = {tree / "include"};
        CHECK(memo.get(kernel, config, source).read.parameters == Names{"x", "count"});
        CHECK(get() == Names{"x", "n"});
    }
}

TEST_CASE("a catalog's reading of a kernel serves its first call's key: the declaration is read once")
{
    test::RuntimePackage package;
    Config config = package.config;
    auto cache = std::make_shared<ArtifactCache>(config, "sim", true, [](const std::string&) {});
    KernelSource source = kernel_of_file(package.package() / "push/push_cuda.cu", config).value();
    auto gpu = GpuAccess::over(std::make_shared<test::FakeCudaDriver>());
    CudaKernel kernel(source, config, cache, gpu, [](const std::string&) {});
    CHECK_FALSE(cache->find(source, {"sm_90", "cubin"}));  // nothing built: planned, not found
    CHECK(cache->declarations().readings() == 0);
}

TEST_CASE_FIXTURE(Fixture, "a reading keeps the source's directive tokens for the include scan")
{
    signatures::LexedTexts lexed;
    signatures::HeaderCache cache(&lexed);
    CHECK(signatures::reduced(memo.read(kernel, Config{}, source, &cache)).read.parameters == Names{"x", "n"});
    // Kept by the reading (the header and the source), not lexed on the next ask.
    REQUIRE(lexed.size() == 2);
    auto kept = lexed.directives(source);
    CHECK(lexed.size() == 2);
    // What the include scan is given is what it would have lexed itself.
    auto own = signatures::lex_cpp(source, signatures::LexScope::directives);
    REQUIRE(kept->size() == own.size());
    for (std::size_t i = 0; i < own.size(); ++i) {
        CAPTURE(i);
        CHECK(kept->at(i).kind == own[i].kind);
        CHECK(kept->at(i).text == own[i].text);
        CHECK(kept->at(i).line == own[i].line);
        CHECK(kept->at(i).glued == own[i].glued);
    }
    CHECK(list_includes(*kept).includes.size() == 2);
}

TEST_SUITE_END();
