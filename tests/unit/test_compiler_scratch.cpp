// Compilers' scratch folders: removed by their owner, by the interrupt
// handler's sweep, and by a later build when their process died.
#include "compilers/compiler_scratch.hpp"
#include "util/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"

#include "scoped_env.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

TEST_SUITE_BEGIN("compiler_scratch");

using namespace ck;
namespace fs = std::filesystem;

namespace {

std::size_t scratch_folders_in(const fs::path& parent)
{
    std::size_t count = 0;
    for (const auto& entry : fs::directory_iterator(parent))
        if (entry.path().filename().string().rfind(compiler_scratch_prefix, 0) == 0) ++count;
    return count;
}

// The pid of a process that has exited and been reaped.
long dead_pid()
{
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

}  // namespace

TEST_CASE("a scratch folder in TMPDIR holds the compiler's tmp/ and is gone after its owner: 0 left")
{
    test::TempTree tree;
    test::ScopedEnv tmpdir("TMPDIR", tree.root().string());
    {
        CompilerScratch scratch;
        CHECK(scratch.path().parent_path() == tree.root());
        CHECK(fs::is_directory(scratch.tmp()));
        auto owner =
            owner_of_temporary(scratch.path().filename().string().substr(std::string(compiler_scratch_prefix).size()));
        REQUIRE(owner);
        CHECK(owner->pid == ::getpid());
        tree.write(scratch.tmp().lexically_relative(tree.root()).string() + "/tmpxft_0001.cpp", "x");
        CHECK(scratch_folders_in(tree.root()) == 1);
    }
    CHECK(scratch_folders_in(tree.root()) == 0);
}

TEST_CASE("the interrupt sweep removes 2 live scratch folders with nested files, and refuses a 3rd: 0 left")
{
    test::TempTree tree;
    test::ScopedEnv tmpdir("TMPDIR", tree.root().string());
    CompilerScratch first;
    CompilerScratch second;
    tree.write(first.tmp().lexically_relative(tree.root()).string() + "/a/b/tmpxft_0002.ptx", "x");
    tree.write(second.path().lexically_relative(tree.root()).string() + "/push.cubin", "x");
    fs::create_symlink("/etc", first.tmp() / "link");  // removed, never followed
    REQUIRE(scratch_folders_in(tree.root()) == 2);
    // In a child, as in the signal handler of a process about to die: the
    // sweep also stops this process from making new folders.
    pid_t child = ::fork();
    if (child == 0) {
        remove_compiler_scratch_folders();
        bool refused = false;
        try {
            CompilerScratch late;
        } catch (const ToolchainError&) {
            refused = true;
        }
        ::_exit(refused && scratch_folders_in(tree.root()) == 0 ? 0 : 1);
    }
    int status = -1;
    ::waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(scratch_folders_in(tree.root()) == 0);
    CHECK(fs::exists("/etc/passwd"));
}

TEST_CASE("a later build removes 1 scratch folder of a dead process and keeps 1 of a live one")
{
    test::TempTree tree;
    std::string prefix = compiler_scratch_prefix;
    tree.write(prefix + process_scope() + "." + std::to_string(dead_pid()) + ".0.1/tmp/tmpxft_0003.cpp", "x");
    tree.write(prefix + process_scope() + "." + std::to_string(::getpid()) + ".0.2/tmp/tmpxft_0004.cpp", "x");
    tree.write("unrelated.1.0.3/keep", "x");
    CHECK(remove_stale_compiler_scratch(tree.root()) == 1);
    CHECK(scratch_folders_in(tree.root()) == 1);
    CHECK(fs::exists(tree / "unrelated.1.0.3/keep"));
    CHECK(remove_stale_compiler_scratch(tree.root(), 0) == 1);  // older than no age at all
    CHECK(scratch_folders_in(tree.root()) == 0);
}

TEST_SUITE_END();
