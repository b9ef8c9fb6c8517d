// The root is chosen as cunumpy's PyccelCache(name) chooses it.
#include "cunumpy_kernels/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

TEST_SUITE_BEGIN("cache_location");

using namespace ck;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name)
    {
        const char* old = std::getenv(name);
        if (old) old_ = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv()
    {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("the environment prefix is cunumpy's")
{
    CHECK(env_prefix_of("my-sim") == "MY_SIM");
    CHECK(env_prefix_of("tree.d-3d") == "TREE_D_3D");
    CHECK(env_prefix_of("struphy") == "STRUPHY");
}

TEST_CASE("default root is ~/.cache/<name>/kernels")
{
    test::TempTree tree;
    ScopedEnv home("HOME", tree.root().string());
    auto location = resolve_cache_location("my-sim", std::nullopt, true);
    CHECK(location.root == tree / ".cache/my-sim/kernels");
    CHECK_FALSE(location.fallback);
    CHECK(fs::is_directory(location.root));
}

TEST_CASE("<PREFIX>_KERNEL_CACHE overrides the root")
{
    test::TempTree tree;
    ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "elsewhere").string());
    CHECK(resolve_cache_location("my-sim", std::nullopt, true).root == tree / "elsewhere");
}

TEST_CASE("an unwritable root falls back to <tmp>/<name>-kernels")
{
    if (::geteuid() == 0) {
        // root writes anywhere; a file where the folder should be blocks it instead.
    }
    test::TempTree tree;
    tree.write("blocked", "a file, not a folder");
    ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "blocked/kernels").string());
    ScopedEnv tmp("TMPDIR", (tree / "tmp").string());
    fs::create_directories(tree / "tmp");
    auto location = resolve_cache_location("my-sim", std::nullopt, true);
    CHECK(location.fallback);
    CHECK(location.root == tree / "tmp/my-sim-kernels");
    CHECK(location.preferred == tree / "blocked/kernels");
}

TEST_CASE("nothing writable is an error naming every folder tried")
{
    test::TempTree tree;
    tree.write("blocked", "file");
    ScopedEnv cache("MY_SIM_KERNEL_CACHE", (tree / "blocked/kernels").string());
    ScopedEnv tmp("TMPDIR", (tree / "blocked/tmp").string());
    CHECK_THROWS_WITH_AS(resolve_cache_location("my-sim", std::nullopt, true),
                         doctest::Contains("MY_SIM_KERNEL_CACHE"), CacheError);
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
