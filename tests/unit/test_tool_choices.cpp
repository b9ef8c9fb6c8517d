// The choices the CLI's flags make, applied by the library: target flags,
// the cache a tree uses, the porting line, the default warning sink.
#include "scoped_env.hpp"
#include "temp_tree.hpp"

#include "cache/cache.hpp"
#include "cache_admin/cache_maintenance.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "package/porting_summary.hpp"
#include "builder/target_flags.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>

TEST_SUITE_BEGIN("tool_choices");

using namespace ck;
namespace fs = std::filesystem;

TEST_CASE("target flags replace the architectures, switch PTX and append options")
{
    Config config;
    config.architectures = {"sm_80", "sm_90"};
    config.options = {"-DA"};
    TargetFlags flags;
    flags.architectures = {"sm_86", ""};
    flags.no_ptx = true;
    flags.compiler = "nvcc";
    flags.options = {"-DB"};
    flags.apply(config);
    CHECK(config.architectures == std::vector<std::string>{"sm_86"});
    CHECK_FALSE(config.ptx);
    CHECK(config.compiler == CudaCompilerKind::nvcc);
    CHECK(config.options == std::vector<std::string>{"-DA", "-DB"});
}

TEST_CASE("contradicting or malformed target flags are usage errors naming the flag")
{
    Config config;
    TargetFlags both;
    both.ptx = both.no_ptx = true;
    CHECK_THROWS_WITH_AS(both.apply(config), doctest::Contains("--ptx and --no-ptx"), UsageError);
    TargetFlags arch;
    arch.architectures = {"gfx90a"};
    CHECK_THROWS_WITH_AS(arch.apply(config), doctest::Contains("--arch"), UsageError);
    TargetFlags compiler;
    compiler.compiler = "clang";
    CHECK_THROWS_WITH_AS(compiler.apply(config), doctest::Contains("--compiler"), UsageError);
}

TEST_CASE("one target: a cubin alone, or the PTX of its family")
{
    Config config;
    select_one_target(config, "sm_90", "--arch");
    CHECK(config.architectures == std::vector<std::string>{"sm_90"});
    CHECK_FALSE(config.ptx);
    select_one_target(config, "compute_80", "--arch");
    CHECK(config.architectures == std::vector<std::string>{"sm_80"});
    CHECK(config.ptx);
    // Arch- and family-specific PTX is not the plain PTX of sm_XX: it names itself.
    for (std::string target : {"compute_90a", "compute_100f", "sm_100a", "sm_103f"}) {
        select_one_target(config, target, "--arch");
        CHECK(config.architectures == std::vector<std::string>{target});
        CHECK_FALSE(config.ptx);
    }
    CHECK_THROWS_WITH_AS(select_one_target(config, "gfx90a", "cache path: --arch"),
                         doctest::Contains("cache path: --arch gfx90a is not a target"), UsageError);
}

TEST_CASE("the cache name is the configured one, else the top-level package")
{
    Config config;
    CHECK(cache_name_of(config, "sim") == "sim");
    config.cache_name = "shared";
    CHECK(cache_name_of(config, "sim") == "shared");
}

TEST_CASE("a tree's cache: the folder given, else the root named after its kernels' package")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.kernel("src/sim", "push");
    test::ScopedEnv env("SIM_KERNEL_CACHE", (tree / "sim-cache").string());
    Config config;
    CHECK(locate_tree_cache(tree / "src", config, false).root == tree / "sim-cache");
    config.cache_dir = tree / "explicit";
    CHECK(locate_tree_cache(tree / "src", config, false).root == tree / "explicit");
}

TEST_CASE("a tree without kernels and no cache named is a usage error saying what to pass")
{
    test::TempTree tree;
    CHECK_THROWS_WITH_AS(locate_tree_cache(tree.root(), Config{}, false),
                         doctest::Contains("pass --cache-dir, --cache-name, or --tree"), UsageError);
}

TEST_CASE("the porting line names at most max_missing kernels")
{
    CHECK(porting_summary(3, {}, 10) == "CUDA kernels: 3 of 3");
    CHECK(porting_summary(3, {"sort"}, 10) == "CUDA kernels: 2 of 3 (missing: sort)");
    CHECK(porting_summary(4, {"a", "b", "c"}, 2) == "CUDA kernels: 1 of 4 (missing: a, b, ...)");
    CHECK(porting_summary(2, {"a"}, 0) == "CUDA kernels: 1 of 2 (missing: ...)");
}

TEST_CASE("the default warning sink writes one prefixed line to stderr")
{
    test::TempTree tree;
    fs::path captured = tree / "stderr";
    std::fflush(stderr);
    int saved = ::dup(2);
    REQUIRE(saved >= 0);
    FILE* file = std::fopen(captured.c_str(), "w");
    REQUIRE(file);
    ::dup2(::fileno(file), 2);
    write_warning_line("kernel 'sort' ran on the host");
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::fclose(file);
    std::ifstream in(captured);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "cunumpy-kernels: warning: kernel 'sort' ran on the host\n");
}
