// The CLI's file access log: it sees what std::filesystem, streams and the C
// library ask, on every thread, with relative paths made absolute; it leaves
// out a memo's own files and /proc; and it says when it cannot vouch for a
// plan (a process started, the working folder moved). Its own executable:
// it defines the C library's entry points.
#include "file_access_log.hpp"
#include "util/bookkeeping_access.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <thread>

TEST_SUITE_BEGIN("file_access_log");

using namespace ck;
namespace fs = std::filesystem;

namespace {

const FileAccesses::Path* find(const FileAccesses& accesses, const fs::path& path)
{
    auto it = std::find_if(accesses.paths.begin(), accesses.paths.end(),
                           [&](const FileAccesses::Path& p) { return p.path == path.string(); });
    return it == accesses.paths.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("the log sees the planner's ways of asking, on every thread")
{
    test::TempTree tree;
    tree.write("pkg/a.py", "x = 1\n");
    tree.write("pkg/b.cuh", "int b;\n");
    fs::create_directories(tree / "listed/sub");
    ::setenv("CK_TEST_LOG_SET", "value", 1);
    ::unsetenv("CK_TEST_LOG_UNSET");
    cli::FileAccessLog log;
    CHECK_FALSE(fs::exists(tree / "pkg/missing.cuh"));
    std::ifstream(tree / "pkg/a.py");
    for (const auto& entry : fs::directory_iterator(tree / "listed")) (void)entry;
    std::thread([&] { (void)fs::is_regular_file(tree / "pkg/b.cuh"); }).join();
    int folder = ::open(tree.root().c_str(), O_RDONLY | O_DIRECTORY);
    struct stat st {};
    (void)::fstatat(folder, "pkg/relative.h", &st, 0);
    ::close(folder);
    (void)std::getenv("CK_TEST_LOG_SET");
    (void)std::getenv("CK_TEST_LOG_UNSET");
    (void)fs::exists("/proc/self/status");
    (void)::access((tree / "listed").c_str(), W_OK | X_OK);
    FileAccesses accesses = log.finish();

    CHECK(accesses.incomplete == "");
    CHECK(find(accesses, tree / "pkg/missing.cuh"));
    CHECK(find(accesses, tree / "pkg/a.py"));
    REQUIRE(find(accesses, tree / "listed"));
    CHECK(find(accesses, tree / "listed")->listed);
    CHECK(find(accesses, tree / "pkg/b.cuh"));
    CHECK(find(accesses, tree / "pkg/relative.h"));
    CHECK_FALSE(find(accesses, "/proc/self/status"));
    CHECK(accesses.permission_checks ==
          std::vector<FileAccesses::PermissionCheck>{{(tree / "listed").string(), W_OK | X_OK, 0}});
    CHECK(std::count(accesses.environment.begin(), accesses.environment.end(),
                     std::pair<std::string, std::optional<std::string>>("CK_TEST_LOG_SET", "value")) == 1);
    CHECK(std::count(accesses.environment.begin(), accesses.environment.end(),
                     std::pair<std::string, std::optional<std::string>>("CK_TEST_LOG_UNSET", std::nullopt)) == 1);
    for (const auto& p : accesses.paths) CHECK(p.path.find("canary") == std::string::npos);
    ::unsetenv("CK_TEST_LOG_SET");
}

TEST_CASE("a tmpfs under /dev is logged; a path on through a link of /proc cannot be")
{
    SUBCASE("/dev/shm") {
        cli::FileAccessLog log;
        (void)fs::exists("/dev/shm/ck-test-absent/push_cuda.cu");
        (void)fs::exists("/dev/null");
        FileAccesses accesses = log.finish();
        CHECK(accesses.incomplete == "");
        CHECK(find(accesses, "/dev/shm/ck-test-absent/push_cuda.cu"));
        CHECK_FALSE(find(accesses, "/dev/null"));
    }
    SUBCASE("another file system mounted under /dev (devpts here)") {
        struct stat dev {}, pts {};
        if (::stat("/dev", &dev) != 0 || ::stat("/dev/pts", &pts) != 0 || dev.st_dev == pts.st_dev) return;
        cli::FileAccessLog log;
        (void)fs::exists("/dev/pts/ck-test-absent");
        CHECK(find(log.finish(), "/dev/pts/ck-test-absent"));
    }
    SUBCASE("/proc/self/cwd/...") {
        cli::FileAccessLog log;
        (void)fs::exists("/proc/self/cwd/pkg/a.py");
        CHECK(log.finish().incomplete ==
              "a path through a link of /proc (a process's working folder, root or open folder)");
    }
    SUBCASE("a descriptor's own link is no path on") {
        cli::FileAccessLog log;
        int fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char target[64];
        (void)::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), target, sizeof target);
        ::close(fd);
        CHECK(log.finish().incomplete == "");
    }
}

TEST_CASE("relative paths are taken against the working folder")
{
    test::TempTree tree;
    fs::path before = fs::current_path();
    fs::current_path(tree.root());
    FileAccesses accesses;
    {
        cli::FileAccessLog log;
        (void)fs::exists("sub/file.py");
        accesses = log.finish();
    }
    fs::current_path(before);
    CHECK(find(accesses, tree.root().string() + "/sub/file.py"));
}

TEST_CASE("bookkeeping's own files are no witnesses, and its writes are not the plan's")
{
    test::TempTree tree;
    cli::FileAccessLog log;
    {
        util::BookkeepingFileAccess bookkeeping;
        (void)fs::exists(tree / "memo.record");
        std::ofstream(tree / "counters.json") << "{}";
        fs::create_directories(tree / ".stats/sub");
    }
    (void)fs::exists(tree / "input.py");
    FileAccesses accesses = log.finish();
    CHECK_FALSE(find(accesses, tree / "memo.record"));
    CHECK(find(accesses, tree / "input.py"));
    CHECK(accesses.written == "");
}

TEST_CASE("every way of changing the file system is seen as a write")
{
    test::TempTree tree;
    fs::path file = tree.write("pkg/a.py", "x = 1\n");
    fs::path expected;
    cli::FileAccessLog log;
    SUBCASE("a stream opened to write") { std::ofstream(expected = tree / "pkg/new.py") << "y"; }
    SUBCASE("open with O_CREAT") {
        int fd = ::open((expected = tree / "pkg/made").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ::close(fd);
    }
    SUBCASE("open to read and write an existing file") {
        int fd = ::open((expected = file).c_str(), O_RDWR | O_CLOEXEC);
        ::close(fd);
    }
    SUBCASE("a folder made") { fs::create_directories(expected = tree / "made/sub"); expected = tree / "made"; }
    SUBCASE("a rename") { fs::rename(expected = file, tree / "pkg/b.py"); }
    SUBCASE("a removal") { fs::remove(expected = file); }
    SUBCASE("a removal of a whole folder") { fs::remove_all(tree / "pkg"); expected = file; }
    SUBCASE("a modification time set") { fs::last_write_time(expected = file, fs::file_time_type::clock::now()); }
    SUBCASE("a mode changed") { fs::permissions(expected = file, fs::perms::owner_exec, fs::perm_options::add); }
    SUBCASE("a mode changed through a handle") {
        int fd = ::open((expected = file).c_str(), O_RDONLY | O_CLOEXEC);
        ::fchmod(fd, 0600);
        ::close(fd);
    }
    SUBCASE("a link made") { fs::create_symlink("a.py", expected = tree / "pkg/link.py"); }
    SUBCASE("a temporary file made from a pattern") {
        std::string pattern = (tree / "pkg/tmpXXXXXX").string();
        int fd = ::mkstemp(pattern.data());
        ::close(fd);
        expected = pattern;
    }
    FileAccesses accesses = log.finish();
    CHECK(accesses.written == expected.string());
}

TEST_CASE("reading, listing and asking are not writes")
{
    test::TempTree tree;
    fs::path file = tree.write("pkg/a.py", "x = 1\n");
    cli::FileAccessLog log;
    std::ifstream(file).get();
    for (const auto& entry : fs::directory_iterator(tree / "pkg")) (void)entry;
    (void)fs::canonical(file);
    (void)::access(file.c_str(), W_OK);
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    ::close(fd);
    CHECK(log.finish().written == "");
}

TEST_CASE("what the log cannot follow makes it incomplete")
{
    test::TempTree tree;
    cli::FileAccessLog log;
    SUBCASE("a process started") {
        pid_t pid = 0;
        char* argv[] = {const_cast<char*>("true"), nullptr};
        REQUIRE(::posix_spawnp(&pid, "true", nullptr, nullptr, argv, environ) == 0);
        ::waitpid(pid, nullptr, 0);
        CHECK(log.finish().incomplete == "a process was started");
    }
    SUBCASE("the working folder moved") {
        fs::path before = fs::current_path();
        fs::current_path(tree.root());
        fs::current_path(before);
        CHECK(log.finish().incomplete == "the working folder changed");
    }
}

TEST_CASE("one log at a time")
{
    std::optional<cli::FileAccessLog> log(std::in_place);
    CHECK_THROWS_AS(cli::FileAccessLog(), std::logic_error);
    log.reset();
    cli::FileAccessLog again;
    CHECK(again.finish().incomplete == "");
}
