// The build on a miss, with a fake compiler: it publishes the entry `build`
// would make so a second lookup finds it, compiles a key once however many
// builders miss it together, keeps a read-only cache's build in memory, and
// publishes nothing that failed to compile or to pass the artifact checks.
#include "cunumpy_kernels/error.hpp"
#include "compilers/artifact_check.hpp"
#include "runtime/artifact_cache.hpp"
#include "runtime/miss_build.hpp"

#include "first_call_tree.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

TEST_SUITE_BEGIN("miss_build");

using namespace ck;
using test::FirstCallTree;
namespace fs = std::filesystem;

namespace {

// The entries of the cache's `cuda` folder.
std::size_t entry_count(const FirstCallTree& t) { return EntryStore(t.location.root).entry_dirs("cuda").size(); }

}  // namespace

TEST_CASE_FIXTURE(FirstCallTree, "a miss build publishes the entry a second lookup finds")
{
    auto lookup = entries();
    auto build = miss_build(*lookup);
    ModuleImage image = build->build(push, 9, 0);
    CHECK(compiler.compiles == 1);
    CHECK(image.info.how == "nvrtc");
    CHECK(image.info.target == "sm_90");
    CHECK(image.info.published);
    CHECK(image.bytes == compiler.cubin);
    CHECK(image.entry_symbol == "push");
    CHECK(fs::exists(image.info.artifact));
    CHECK(build->compiled() == 1);

    // The first call's lookup of the next process computes the same key and finds it.
    EntryFound found = entries()->find(planned_job("sm_90"), nullptr, false);
    REQUIRE(found.candidate);
    CHECK(found.candidate->manifest.key == image.info.key);
    CHECK(entries()->read(*found.candidate).bytes == compiler.cubin);
    // It is the latest entry of its kernel and target, and the cache is tagged.
    CHECK(EntryStore(location.root).latest("cuda", push.module, "sm_90")->key == image.info.key);
    CHECK(fs::exists(location.root / "CACHEDIR.TAG"));
}

TEST_CASE_FIXTURE(FirstCallTree, "a key built once is read, not compiled, by the next build")
{
    auto lookup = entries();
    ModuleImage first = miss_build(*lookup)->build(push, 9, 0);
    SUBCASE("in the same process")
    {
        auto build = miss_build(*lookup);
        build->build(push, 9, 0);
        ModuleImage again = build->build(push, 9, 0);
        CHECK(again.info.key == first.info.key);
        CHECK_FALSE(again.info.published);
        CHECK(again.info.how == "cubin");
    }
    SUBCASE("in another process")
    {
        auto other = entries();
        ModuleImage again = miss_build(*other)->build(push, 9, 0);
        CHECK(again.info.artifact == first.info.artifact);
    }
    CHECK(compiler.compiles == 1);
    CHECK(entry_count(*this) == 1);
}

TEST_CASE_FIXTURE(FirstCallTree, "two builders that miss the same key together publish it once")
{
    compiler.delay = std::chrono::milliseconds(300);
    auto lookup_a = entries();
    auto lookup_b = entries();
    auto build_a = miss_build(*lookup_a);
    auto build_b = miss_build(*lookup_b);
    ModuleImage a;
    ModuleImage b;
    std::thread first([&] { a = build_a->build(push, 9, 0); });
    std::thread second([&] { b = build_b->build(push, 9, 0); });
    first.join();
    second.join();
    CHECK(compiler.compiles == 1);
    CHECK(a.info.key == b.info.key);
    CHECK(a.bytes == b.bytes);
    CHECK(a.info.published + b.info.published == 1);  // the other waited and read the entry
    CHECK(entry_count(*this) == 1);
    CHECK_FALSE(fs::exists(EntryStore(location.root).lock_file("cuda", a.info.key)));
}

TEST_CASE_FIXTURE(FirstCallTree, "a read-only cache keeps the build in memory and publishes nothing")
{
    auto lookup = entries(true);
    ModuleImage image = miss_build(*lookup, true)->build(push, 9, 0);
    CHECK(image.bytes == compiler.cubin);
    CHECK_FALSE(image.info.published);
    CHECK(image.info.artifact.empty());
    CHECK_FALSE(fs::exists(location.root / "cuda"));
}

TEST_CASE_FIXTURE(FirstCallTree, "a build that fails publishes nothing and says why")
{
    std::string expected;
    bool check_failed = false;
    SUBCASE("the source does not compile")
    {
        compiler.ok = false;
        compiler.log = "push_cuda.cu:3: error: expected a ';'";
        expected = "NVRTC could not build";
    }
    SUBCASE("a cubin of another architecture")
    {
        compiler.cubin = test::craft({.flags = 0x06005004});  // sm_80
        expected = "NVRTC built an artifact that cannot be loaded";
        check_failed = true;
    }
    SUBCASE("a cubin without the kernel's entry")
    {
        compiler.cubin = test::craft({.symbols = {{"pull"}}});
        expected = "push";
        check_failed = true;
    }
    SUBCASE("not a CUDA ELF")
    {
        compiler.cubin = "not a cubin";
        expected = "was not published";
        check_failed = true;
    }
    auto lookup = entries();
    auto build = miss_build(*lookup);
    if (check_failed)
        CHECK_THROWS_WITH_AS(build->build(push, 9, 0), doctest::Contains(expected.c_str()), ArtifactCheckError);
    else
        CHECK_THROWS_WITH_AS(build->build(push, 9, 0), doctest::Contains(expected.c_str()), ArtifactError);
    CHECK(entry_count(*this) == 0);
    CHECK(build->compiled() == 0);
}

TEST_CASE_FIXTURE(FirstCallTree, "the cache composes the pieces: a miss, a build with the given compiler, then a hit")
{
    auto fake = std::make_unique<test::FakeCudaCompiler>();
    auto* compiles = &fake->compiles;
    {
        ArtifactCache cache(
            config, "sim", false, [](const std::string&) {}, std::move(fake));
        CHECK_FALSE(cache.find(push, {"sm_90", "cubin"}));
        ModuleImage built = cache.build(push, 9, 0);
        CHECK(built.info.published);
        CHECK(*compiles == 1);
    }
    ArtifactCache next(
        config, "sim", true, [](const std::string&) {}, std::make_unique<test::FakeCudaCompiler>());
    auto found = next.find(push, {"sm_90", "cubin"});
    REQUIRE(found);
    CHECK(found->how == "cubin");
    CHECK(next.read(*found).bytes == test::craft({}));
}
