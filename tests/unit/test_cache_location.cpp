// The root is chosen as cunumpy's PyccelCache(name) chooses it.
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "scoped_env.hpp"
#include "temp_tree.hpp"

#include "util/file_util.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

TEST_SUITE_BEGIN("cache_location");

using namespace ck;
namespace fs = std::filesystem;

TEST_CASE("the environment prefix is cunumpy's")
{
    CHECK(env_prefix_of("my-sim") == "MY_SIM");
    CHECK(env_prefix_of("tree.d-3d") == "TREE_D_3D");
    CHECK(env_prefix_of("struphy") == "STRUPHY");
}

TEST_CASE("default root is ~/.cache/<name>/kernels")
{
    test::TempTree tree;
    test::ScopedEnv home("HOME", tree.root().string());
    auto location = resolve_cache_location("my-sim", std::nullopt, true);
    CHECK(location.root == tree / ".cache/my-sim/kernels");
    CHECK_FALSE(location.fallback);
    CHECK(fs::is_directory(location.root));
}

TEST_CASE("HOME unset: the password database's home; HOME empty: / as Python's Path.home(); never a relative root")
{
    const passwd* user = ::getpwuid(::getuid());
    REQUIRE(user);
    test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", std::nullopt);
    {
        test::ScopedEnv home("HOME", std::nullopt);
        auto location = resolve_cache_location("my-sim", std::nullopt, false);
        CHECK(location.root == (fs::path(user->pw_dir) / ".cache/my-sim/kernels").lexically_normal());
    }
    {
        test::ScopedEnv home("HOME", std::string());
        auto location = resolve_cache_location("my-sim", std::nullopt, false);
        CHECK(location.root == fs::path("/.cache/my-sim/kernels"));
        CHECK(location.root.is_absolute());
    }
}

TEST_CASE("<PREFIX>_KERNEL_CACHE is literal as in cunumpy: ~ kept, relative to the working folder, normalized")
{
    fs::path cwd = fs::current_path();
    {
        test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", "~/kc");
        CHECK(resolve_cache_location("my-sim", std::nullopt, false).root == cwd / "~/kc");
    }
    {
        test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", "work/../kc/");
        CHECK(resolve_cache_location("my-sim", std::nullopt, false).root == cwd / "kc");
    }
    {
        test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", "");  // Path(""): the working folder
        CHECK(resolve_cache_location("my-sim", std::nullopt, false).root == cwd);
    }
    CHECK(resolve_cache_location("my-sim", fs::path("a/./b/../c/"), false).root == cwd / "a/c");
}

TEST_CASE("<PREFIX>_KERNEL_CACHE overrides the root")
{
    test::TempTree tree;
    test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "elsewhere").string());
    CHECK(resolve_cache_location("my-sim", std::nullopt, true).root == tree / "elsewhere");
}

TEST_CASE("an unwritable root falls back to <tmp>/<name>-kernels")
{
    if (::geteuid() == 0) {
        // root writes anywhere; a file where the folder should be blocks it instead.
    }
    test::TempTree tree;
    tree.write("blocked", "a file, not a folder");
    test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "blocked/kernels").string());
    test::ScopedEnv tmp("TMPDIR", (tree / "tmp").string());
    fs::create_directories(tree / "tmp");
    auto location = resolve_cache_location("my-sim", std::nullopt, true);
    CHECK(location.fallback);
    CHECK(location.root == tree / "tmp/my-sim-kernels");
    CHECK(location.preferred == tree / "blocked/kernels");
}

TEST_CASE("a planned location is where a build would write, and creates nothing")
{
    test::TempTree tree;
    tree.write("blocked", "a file, not a folder");
    test::ScopedEnv tmp("TMPDIR", (tree / "tmp").string());
    {
        // A preferred root that could be made: itself, not made.
        test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "deep/down/kernels").string());
        auto planned = planned_cache_location("my-sim", std::nullopt);
        CHECK_FALSE(planned.fallback);
        CHECK(planned.root == tree / "deep/down/kernels");
        CHECK_FALSE(fs::exists(tree / "deep"));
    }
    test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "blocked/kernels").string());
    // Blocked: the fallback a build would make, not made either; the same as a build's.
    auto planned = planned_cache_location("my-sim", std::nullopt);
    CHECK(planned.fallback);
    CHECK(planned.root == tree / "tmp/my-sim-kernels");
    CHECK(planned.preferred == tree / "blocked/kernels");
    CHECK_FALSE(fs::exists(tree / "tmp"));
    CHECK(resolve_cache_location("my-sim", std::nullopt, true).root == planned.root);
    {
        // Nothing could be written (a build fails): the preferred root, for what it holds.
        test::ScopedEnv blocked_tmp("TMPDIR", (tree / "blocked/tmp").string());
        auto nowhere = planned_cache_location("my-sim", std::nullopt);
        CHECK_FALSE(nowhere.fallback);
        CHECK(nowhere.root == tree / "blocked/kernels");
    }
    // --cache-dir is taken as given.
    CHECK(planned_cache_location("my-sim", tree / "given").root == tree / "given");
    CHECK_FALSE(fs::exists(tree / "given"));
}

TEST_CASE("could_make_writable_dir answers as make_writable_dir would, without making anything")
{
    test::TempTree tree;
    tree.write("file", "x");
    fs::create_symlink(tree / "gone", tree / "dangling");
    std::string why;
    CHECK(util::could_make_writable_dir(tree / "a/b/c", &why));
    CHECK_FALSE(fs::exists(tree / "a"));
    CHECK(util::could_make_writable_dir(tree.root(), &why));
    CHECK_FALSE(util::could_make_writable_dir(tree / "file/sub", &why));
    CHECK(why == (tree / "file").string() + " is not a folder");
    CHECK_FALSE(util::could_make_writable_dir(tree / "dangling/sub", &why));
    CHECK_FALSE(util::make_writable_dir(tree / "dangling/sub", nullptr));
    if (::geteuid() != 0) {  // root may write anywhere
        fs::create_directories(tree / "locked");
        fs::permissions(tree / "locked", fs::perms::owner_read | fs::perms::owner_exec);
        CHECK_FALSE(util::could_make_writable_dir(tree / "locked/sub", &why));
        fs::permissions(tree / "locked", fs::perms::owner_all);
    }
}

TEST_CASE("nothing writable is an error naming every folder tried")
{
    test::TempTree tree;
    tree.write("blocked", "file");
    test::ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "blocked/kernels").string());
    test::ScopedEnv tmp("TMPDIR", (tree / "blocked/tmp").string());
    CHECK_THROWS_WITH_AS(resolve_cache_location("my-sim", std::nullopt, true), doctest::Contains("MY_SIM_KERNEL_CACHE"),
                         CacheError);
}

TEST_CASE("--cache-dir is used as given; readers never create folders")
{
    test::TempTree tree;
    auto location = resolve_cache_location("x", tree / "given", true);
    CHECK(location.root == tree / "given");
    CHECK(fs::is_directory(tree / "given"));
    auto reader = resolve_cache_location("x", tree / "absent", false);
    CHECK(reader.root == tree / "absent");
    CHECK_FALSE(fs::exists(tree / "absent"));
}

TEST_SUITE_END();
