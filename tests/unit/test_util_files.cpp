// AtomicFile, TemporaryDir, RegularFiles, SHA-256 and the text helpers of lib/util/.
#include "temp_tree.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/atomic_file.hpp"
#include "util/file_util.hpp"
#include "util/regular_files.hpp"
#include "util/sha256.hpp"
#include "util/temporary_dir.hpp"
#include "util/text.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <thread>
#include <vector>

TEST_SUITE_BEGIN("util_files");

using namespace ck;
namespace fs = std::filesystem;

namespace {

std::size_t files_in(const fs::path& dir)
{
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++count;
    return count;
}

}  // namespace

TEST_CASE("an atomic file replaces its target whole at commit, and only then")
{
    test::TempTree tree;
    fs::path target = tree.write("state.json", "old");
    {
        util::AtomicFile file(target);
        file.write("new content");
        CHECK(util::read_file(target) == "old");
        CHECK(file.temporary().parent_path() == target.parent_path());
        CHECK(file.temporary().filename().string().rfind(".state.json.", 0) == 0);
        file.commit();
    }
    CHECK(util::read_file(target) == "new content");
    CHECK(files_in(tree.root()) == 1);
}

TEST_CASE("an atomic file never committed leaves the target and no temporary")
{
    test::TempTree tree;
    fs::path target = tree.write("state.json", "old");
    {
        util::AtomicFile file(target);
        file.write("half");
    }
    CHECK(util::read_file(target) == "old");
    CHECK(files_in(tree.root()) == 1);
}

TEST_CASE("an atomic file copies a source, and a commit into a missing folder names the target")
{
    test::TempTree tree;
    fs::path source = tree.write("a.so", "bytes");
    util::AtomicFile copy(tree / "b.so");
    copy.copy_from(source);
    copy.commit();
    CHECK(util::read_file(tree / "b.so") == "bytes");

    util::AtomicFile lost(tree / "missing" / "c.so");
    CHECK_THROWS_AS(lost.write("x"), CacheError);
    CHECK_THROWS_WITH_AS(lost.commit(), doctest::Contains("missing/.c.so."), CacheError);
}

TEST_CASE("replace_file_atomically goes through AtomicFile")
{
    test::TempTree tree;
    util::replace_file_atomically(tree / "f", "one");
    util::replace_file_atomically(tree / "f", "two");
    CHECK(util::read_file(tree / "f") == "two");
    CHECK(files_in(tree.root()) == 1);
}

TEST_CASE("a temporary folder is private, made with its parents, and removed with its content")
{
    test::TempTree tree;
    fs::path path = tree / "parent" / "work";
    {
        util::TemporaryDir dir(path);
        CHECK(fs::is_directory(path));
        struct stat info {};
        REQUIRE(::stat(path.c_str(), &info) == 0);
        CHECK((info.st_mode & 0777) == 0700);
        tree.write("parent/work/src/module.py", "x = 1\n");
    }
    CHECK_FALSE(fs::exists(path));
    CHECK(fs::is_directory(tree / "parent"));
}

TEST_CASE("a temporary folder that exists already is refused, naming it")
{
    test::TempTree tree;
    fs::create_directories(tree / "taken");
    CHECK_THROWS_WITH_AS(util::TemporaryDir(tree / "taken"), doctest::Contains("taken"), CacheError);
    CHECK(fs::is_directory(tree / "taken"));
}

TEST_CASE("read_file reads a regular file whole, and refuses a FIFO, a device, a folder and what is too large at once")
{
    test::TempTree tree;
    std::string big(200000, 'x');
    fs::path file = tree.write("a.txt", big);
    CHECK(ck::util::read_file(file) == big);
    CHECK_THROWS_WITH_AS(ck::util::read_file(file, 1000), doctest::Contains("larger than 1000 bytes"), ck::SourceError);
    fs::path fifo = tree / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // no writer: a blocking open would wait forever
    CHECK_THROWS_WITH_AS(ck::util::read_file(fifo), doctest::Contains("not a regular file"), ck::SourceError);
    CHECK_THROWS_WITH_AS(ck::util::read_file("/dev/zero"), doctest::Contains("not a regular file"), ck::SourceError);
    CHECK_THROWS_WITH_AS(ck::util::read_file(tree.root()), doctest::Contains("not a regular file"), ck::SourceError);
    CHECK_THROWS_AS(ck::util::read_file(tree / "missing"), ck::SourceError);
}

TEST_CASE(
    "read_file reads what is there, whatever the stat said: empty files, exact sizes, and a size of 0 with content")
{
    test::TempTree tree;
    CHECK(ck::util::read_file(tree.write("empty", "")).empty());
    for (std::size_t size : {1u, 4095u, 4096u, 65536u, 65537u}) {
        std::string text(size, 'y');
        text.back() = 'z';
        CHECK(ck::util::read_file(tree.write("f" + std::to_string(size), text)) == text);
    }
    // Files of /proc are regular with a stat size of 0, and have content.
    std::string status = ck::util::read_file("/proc/self/status");
    CHECK(status.find("Name:") != std::string::npos);
    CHECK(status.back() == '\n');
}

TEST_CASE("canonical_path gives std::filesystem::canonical's answer, and its errors")
{
    test::TempTree tree;
    fs::path file = tree.write("real/dir/a.cuh", "x");
    fs::create_directory_symlink(tree / "real", tree / "linked");
    fs::create_symlink(tree / "real/dir/a.cuh", tree / "real/b.cuh");
    fs::create_symlink(tree / "nowhere", tree / "dangling");
    const fs::path paths[] = {file,
                              tree / "linked/dir/a.cuh",
                              tree / "linked/dir/../b.cuh",
                              tree / "linked/dir",
                              tree / "real/./dir//a.cuh",
                              tree / "dangling",
                              tree / "missing.cuh",
                              tree / "real/dir/a.cuh/x"};
    for (const auto& path : paths) {
        CAPTURE(path);
        std::error_code ours, theirs;
        fs::path got = util::canonical_path(path, ours);
        fs::path want = fs::canonical(path, theirs);
        CHECK(got == want);
        CHECK(bool(ours) == bool(theirs));
    }
    // A file removed while open: its /proc link ends in " (deleted)", and both refuse it.
    {
        std::string doomed = tree.write("doomed.cuh", "x").string();
        int fd = ::open(doomed.c_str(), O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        fs::remove(doomed);
        std::error_code ours, theirs;
        fs::path link = "/proc/self/fd/" + std::to_string(fd);
        fs::path got = util::canonical_path(link, ours);
        fs::path want = fs::canonical(link, theirs);
        ::close(fd);
        CHECK(bool(ours));
        CHECK(bool(theirs));
        CHECK(got == want);
    }
    struct WorkingFolder {
        fs::path was = fs::current_path();
        ~WorkingFolder() { fs::current_path(was); }
    } restored;
    fs::current_path(tree / "linked");
    std::error_code error;
    CHECK(util::canonical_path("dir/a.cuh", error) == fs::canonical(file));
}

TEST_CASE("SHA-256 in one piece and in pieces agree with the published test vector")
{
    const std::string abc_digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    CHECK(sha256_hex("abc") == abc_digest);
    Sha256Stream stream;
    stream.update("a");
    Sha256Stream copy(stream);
    stream.update("bc");
    CHECK(stream.hex() == abc_digest);
    copy.update("bc");
    CHECK(copy.hex() == abc_digest);
    const unsigned char bytes[] = {0x00, 0x0f, 0xa5, 0xff};
    CHECK(to_hex(bytes, 4) == "000fa5ff");
}

TEST_CASE("counted says one noun or many")
{
    CHECK(util::counted(0, "kernel") == "0 kernels");
    CHECK(util::counted(1, "kernel") == "1 kernel");
    CHECK(util::counted(2, "in-place build") == "2 in-place builds");
    CHECK(util::counted(3, "entry", "entries") == "3 entries");
}

TEST_CASE("regular files are what a stat says, links followed, each path as first asked")
{
    test::TempTree tree;
    fs::path file = tree.write("pkg/a.cuh", "a");
    fs::create_directories(tree / "pkg/folder.cuh");
    fs::create_symlink(file, tree / "pkg/link.cuh");
    fs::create_symlink(tree / "pkg/gone.cuh", tree / "pkg/dangling.cuh");
    util::RegularFiles files;
    CHECK(files.contains(file));
    CHECK(files.contains(tree / "pkg/link.cuh"));
    CHECK_FALSE(files.contains(tree / "pkg/folder.cuh"));
    CHECK_FALSE(files.contains(tree / "pkg/dangling.cuh"));
    CHECK_FALSE(files.contains(tree / "pkg/later.cuh"));

    // The answers of this run stand: one reading of the tree, as a compiler's.
    fs::remove(file);
    tree.write("pkg/later.cuh", "later");
    CHECK(files.contains(file));
    CHECK_FALSE(files.contains(tree / "pkg/later.cuh"));
    // Another object asks the file system again.
    util::RegularFiles next;
    CHECK_FALSE(next.contains(file));
    CHECK(next.contains(tree / "pkg/later.cuh"));
}

TEST_CASE("regular files answer two threads alike")
{
    test::TempTree tree;
    std::vector<fs::path> paths;
    for (int i = 0; i < 200; ++i)
        paths.push_back(i % 2 ? tree.write("f" + std::to_string(i), "x") : tree / ("absent" + std::to_string(i)));
    util::RegularFiles files;
    std::vector<int> first(paths.size()), second(paths.size());
    std::thread other([&] {
        for (std::size_t i = 0; i < paths.size(); ++i) second[i] = files.contains(paths[i]);
    });
    for (std::size_t i = paths.size(); i-- > 0;) first[i] = files.contains(paths[i]);
    other.join();
    CHECK(first == second);
    for (std::size_t i = 0; i < paths.size(); ++i) CHECK(first[i] == static_cast<int>(i % 2));
}
