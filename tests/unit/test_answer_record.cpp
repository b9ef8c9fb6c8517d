// The record of whole answers (status, a build with nothing to compile): an answer comes back only while every
// witness holds in the role it was asked in, its environment is unchanged and
// its file is whole and the user's own; what cannot vouch for an answer
// (incomplete accesses, a change within the racy margin) is never kept.
#include "cache_admin/answer_record.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"
#include "util/temporary_name.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

TEST_SUITE_BEGIN("answer_record");

using namespace ck;
namespace fs = std::filesystem;
using std::chrono::system_clock;

namespace {

// A record that trusts at once (tests cannot date a change time back).
AnswerRecord trusting(const test::TempTree& tree)
{
    return AnswerRecord(tree / "record", std::chrono::nanoseconds(0));
}

RecordedAnswer sample_answer()
{
    RecordedAnswer answer;
    answer.logs = {{3, "a warning: with a colon\nand a second line"}, {1, ""}};
    answer.result = "CUDA kernels: 1 of 2 (missing: b)\n\nkernel  host\n12:34 \n";
    answer.notes = {"not every kernel has a CUDA version: b"};
    answer.exit_code = 1;
    return answer;
}

// The accesses of a plan that read `file`, listed `listed`, found `absent`
// missing and passed through `passed` (asked about, not listed).
FileAccesses accesses_of(std::initializer_list<fs::path> read, std::initializer_list<fs::path> listed = {})
{
    FileAccesses accesses;
    for (const auto& p : read) accesses.paths.push_back({p.string(), false});
    for (const auto& p : listed) accesses.paths.push_back({p.string(), true});
    return accesses;
}

void rewrite_keeping_time(const fs::path& file, const std::string& content)
{
    struct stat before {};
    REQUIRE(::stat(file.c_str(), &before) == 0);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("an answer comes back whole while nothing it rests on changed")
{
    test::TempTree tree;
    fs::path source = tree.write("pkg/a/a_kernels.py", "def a(): pass\n");
    AnswerRecord record = trusting(tree);
    CHECK(record.keep("key", sample_answer(), accesses_of({source, tree / "pkg/missing.cuh"}, {tree / "pkg"}),
                      system_clock::now()) == "");
    auto found = record.find("key");
    REQUIRE(found);
    CHECK(found->logs == sample_answer().logs);
    CHECK(found->result == sample_answer().result);
    CHECK(found->notes == sample_answer().notes);
    CHECK(found->exit_code == 1);
    CHECK_FALSE(found->seconds_at);
    CHECK(found->bookkeeping == "");
    CHECK_FALSE(record.find("another key"));
}

TEST_CASE("a build's answer comes back with where its seconds go and the bookkeeping to repeat")
{
    test::TempTree tree;
    fs::path source = tree.write("pkg/a/a_cuda.cu", "__global__ void a() {}\n");
    AnswerRecord record = trusting(tree);
    RecordedAnswer answer;
    answer.result = "1 kernel (1 with CUDA): 0 built, 3 cached, 0 failed in  s\n";
    answer.seconds_at = answer.result.find(" s\n");
    answer.bookkeeping = "{\"caches\":[]}\n";
    answer.not_to_keep = "";
    REQUIRE(record.keep("build", answer, accesses_of({source}), system_clock::now()) == "");
    auto found = record.find("build");
    REQUIRE(found);
    CHECK(found->result == answer.result);
    CHECK(found->seconds_at == answer.seconds_at);
    CHECK(found->bookkeeping == answer.bookkeeping);
}

TEST_CASE("each kind of change to a witness sends the status back to planning")
{
    test::TempTree tree;
    fs::path source = tree.write("pkg/a/a_kernels.py", "def a(): pass\n");
    fs::path header = tree.write("include/h.cuh", "int x;\n");
    fs::path absent = tree / "pkg/a/extra.cuh";
    fs::create_directories(tree / "pkg/b");
    fs::create_directories(tree / "real_include");
    tree.write("real_include/k.cuh", "int k;\n");
    fs::create_directory_symlink(tree / "real_include", tree / "linked");
    AnswerRecord record = trusting(tree);
    FileAccesses accesses = accesses_of({source, header, absent, tree / "linked/k.cuh"}, {tree / "pkg"});
    REQUIRE(record.keep("key", sample_answer(), accesses, system_clock::now()) == "");
    REQUIRE(record.find("key"));

    SUBCASE("a file rewritten with its size and modification time kept") { rewrite_keeping_time(source, "def b(): pass\n"); }
    SUBCASE("a path that was missing appears") { tree.write("pkg/a/extra.cuh", ""); }
    SUBCASE("a listed folder gains an entry") { tree.write("pkg/c.py", ""); }
    SUBCASE("a file is replaced by a rename") {
        tree.write("include/h2.cuh", "int x;\n");
        fs::rename(tree / "include/h2.cuh", header);
    }
    SUBCASE("a link on the way is pointed elsewhere") {
        fs::create_directories(tree / "other_include");
        tree.write("other_include/k.cuh", "int k;\n");
        fs::remove(tree / "linked");
        fs::create_directory_symlink(tree / "other_include", tree / "linked");
    }
    SUBCASE("the folder a link leads to changes what it holds") { rewrite_keeping_time(tree / "real_include/k.cuh", "int j;\n"); }
    SUBCASE("a folder on the way is replaced") {
        fs::rename(tree / "include", tree / "include.old");
        tree.write("include/h.cuh", "int x;\n");
    }
    SUBCASE("a file's mode changes") { fs::permissions(source, fs::perms::owner_exec, fs::perm_options::add); }
    SUBCASE("a link removed and made again (the file system may give it the same inode)") {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a change time of its own
        fs::remove(tree / "linked");
        fs::create_directory_symlink(tree / "real_include", tree / "linked");
    }
    CHECK_FALSE(record.find("key"));
}

TEST_CASE("a permission the plan asked for is asked again")
{
    test::TempTree tree;
    FileAccesses accesses;
    accesses.permission_checks = {{(tree / "cache").string(), W_OK | X_OK, 0}, {tree.root().string(), W_OK, AT_EACCESS}};
    AnswerRecord record = trusting(tree);
    REQUIRE(record.keep("key", sample_answer(), accesses, system_clock::now()) == "");
    CHECK(record.find("key"));
    fs::create_directories(tree / "cache");  // the answer to access(cache, W_OK | X_OK) is another now
    CHECK_FALSE(record.find("key"));
}

TEST_CASE("a header that is a link is witnessed where it leads, even when that is nowhere yet")
{
    test::TempTree tree;
    fs::create_directories(tree / "gen");
    fs::create_directories(tree / "include");
    fs::create_symlink("../gen/k.cuh", tree / "include/k.cuh");
    AnswerRecord record = trusting(tree);
    REQUIRE(record.keep("key", sample_answer(), accesses_of({tree / "include/k.cuh"}), system_clock::now()) == "");
    REQUIRE(record.find("key"));
    tree.write("gen/k.cuh", "int k;\n");  // generated later: the link now leads somewhere
    CHECK_FALSE(record.find("key"));
    REQUIRE(record.keep("key", sample_answer(), accesses_of({tree / "include/k.cuh"}), system_clock::now()) == "");
    REQUIRE(record.find("key"));
    rewrite_keeping_time(tree / "gen/k.cuh", "int j;\n");
    CHECK_FALSE(record.find("key"));
}

TEST_CASE("a folder only passed through may gain entries")
{
    test::TempTree tree;
    fs::path source = tree.write("pkg/a/a_kernels.py", "def a(): pass\n");
    AnswerRecord record = trusting(tree);
    REQUIRE(record.keep("key", sample_answer(), accesses_of({source}), system_clock::now()) == "");
    tree.write("pkg/unrelated.txt", "");
    tree.write("pkg/a/notes.txt", "");
    CHECK(record.find("key"));
}

TEST_CASE("a folder the plan asked about itself keeps its times: a package installed into it is seen")
{
    test::TempTree tree;
    fs::create_directories(tree / "venv/site-packages");
    AnswerRecord record = trusting(tree);
    // The Python probe stats sys.path's folders and keys on their times.
    REQUIRE(record.keep("key", sample_answer(), accesses_of({tree / "venv/site-packages"}), system_clock::now()) == "");
    REQUIRE(record.find("key"));
    fs::create_directories(tree / "venv/site-packages/numpy-2.2.5.dist-info");
    CHECK_FALSE(record.find("key"));
}

TEST_CASE("the environment variables read are witnesses too")
{
    test::TempTree tree;
    AnswerRecord record = trusting(tree);
    ::setenv("CK_TEST_STATUS_SET", "one", 1);
    ::unsetenv("CK_TEST_STATUS_UNSET");
    FileAccesses accesses;
    accesses.environment = {{"CK_TEST_STATUS_SET", "one"}, {"CK_TEST_STATUS_UNSET", std::nullopt}};
    REQUIRE(record.keep("key", sample_answer(), accesses, system_clock::now()) == "");
    CHECK(record.find("key"));
    SUBCASE("changed") { ::setenv("CK_TEST_STATUS_SET", "two", 1); }
    SUBCASE("unset") { ::unsetenv("CK_TEST_STATUS_SET"); }
    SUBCASE("set where it was not") { ::setenv("CK_TEST_STATUS_UNSET", "", 1); }
    CHECK_FALSE(record.find("key"));
    ::unsetenv("CK_TEST_STATUS_SET");
    ::unsetenv("CK_TEST_STATUS_UNSET");
}

TEST_CASE("what cannot vouch for an answer is not kept")
{
    test::TempTree tree;
    fs::path source = tree.write("pkg/a/a_kernels.py", "def a(): pass\n");
    SUBCASE("accesses the log could not follow") {
        FileAccesses accesses = accesses_of({source});
        accesses.incomplete = "a process was started";
        CHECK(trusting(tree).keep("key", sample_answer(), accesses, system_clock::now()) == "a process was started");
    }
    SUBCASE("a plan that wrote") {
        FileAccesses wrote = accesses_of({source});
        wrote.written = (tree / "cache/entry").string();
        CHECK(trusting(tree).keep("key", sample_answer(), wrote, system_clock::now()) ==
              "the plan wrote " + wrote.written + ": printing its answer again would not");
        CHECK_FALSE(trusting(tree).find("key"));
    }
    SUBCASE("a file changed within the racy margin before the plan started") {
        AnswerRecord record(tree / "record", std::chrono::hours(1));
        std::string why = record.keep("key", sample_answer(), accesses_of({source}), system_clock::now());
        CHECK(why == source.string() + " changed too recently (within the racy margin before the plan, or during it)");
    }
    SUBCASE("a folder the plan asked about appeared while it ran (a build published into the cache)") {
        auto started = system_clock::now();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // file times are coarser than the clock
        fs::create_directories(tree / "cache/host/ab");
        std::string why = trusting(tree).keep("key", sample_answer(), accesses_of({tree / "cache/host/ab"}), started);
        CHECK(why.find((tree / "cache/host/ab").string() + " changed too recently") == 0);
    }
    SUBCASE("a listed folder changed within the racy margin") {
        AnswerRecord record(tree / "record", std::chrono::hours(1));
        std::string why = record.keep("key", sample_answer(), accesses_of({}, {tree / "pkg"}), system_clock::now());
        CHECK(why.find((tree / "pkg").string()) == 0);
    }
    CHECK_FALSE(trusting(tree).find("key"));
}

TEST_CASE("a damaged record file or one another user could write serves nothing")
{
    test::TempTree tree;
    fs::path source = tree.write("pkg/a/a_kernels.py", "def a(): pass\n");
    AnswerRecord record = trusting(tree);
    REQUIRE(record.keep("key", sample_answer(), accesses_of({source}), system_clock::now()) == "");
    fs::path file = record.file_of("key");
    SUBCASE("a byte changed") {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-3, std::ios::end);
        f.put('9');
    }
    SUBCASE("cut short") { fs::resize_file(file, fs::file_size(file) - 5); }
    SUBCASE("writable by others") { fs::permissions(file, fs::perms::others_write, fs::perm_options::add); }
    SUBCASE("a link to a sound copy") {
        fs::rename(file, tree / "copy");
        fs::create_symlink(tree / "copy", file);
    }
    CHECK_FALSE(record.find("key"));
}

TEST_CASE("a body cut anywhere under a checksum that matches it is refused, never misread")
{
    test::TempTree tree;
    fs::path source = tree.write("pkg/a/a_kernels.py", "def a(): pass\n");
    AnswerRecord record = trusting(tree);
    FileAccesses accesses = accesses_of({source});
    accesses.environment = {{"CK_TEST_STATUS_UNSET", std::nullopt}};
    REQUIRE(record.keep("key", sample_answer(), accesses, system_clock::now()) == "");
    fs::path file = record.file_of("key");
    std::string whole = util::read_file(file);
    std::string header = whole.substr(0, whole.find(' ') + 1), body = whole.substr(whole.find('\n') + 1);
    for (std::size_t cut = 0; cut < body.size(); ++cut) {
        std::string part = body.substr(0, cut);
        util::replace_file_atomically(file, header + sha256_hex(part) + "\n" + part);
        CHECK_FALSE(record.find("key"));
    }
    util::replace_file_atomically(file, header + sha256_hex(body) + "\n" + body);
    CHECK(record.find("key"));
}

TEST_CASE("the record keeps the answers written last")
{
    test::TempTree tree;
    AnswerRecord record = trusting(tree);
    for (std::size_t i = 0; i <= AnswerRecord::max_answers; ++i) {
        REQUIRE(record.keep("key " + std::to_string(i), sample_answer(), FileAccesses{}, system_clock::now()) == "");
        // Distinct modification times, whatever the file system's tick.
        struct timespec when[2] = {{static_cast<time_t>(1000 + i), 0}, {static_cast<time_t>(1000 + i), 0}};
        REQUIRE(::utimensat(AT_FDCWD, record.file_of("key " + std::to_string(i)).c_str(), when, 0) == 0);
    }
    REQUIRE(record.keep("last", sample_answer(), FileAccesses{}, system_clock::now()) == "");
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(tree / "record")) files += entry.path().filename().string()[0] != '.';
    CHECK(files == AnswerRecord::max_answers);
    CHECK(record.find("last"));
    CHECK_FALSE(record.find("key 0"));
    CHECK_FALSE(record.find("key 1"));
    CHECK(record.find("key 2"));
}

TEST_CASE("a writer killed before its rename leaves a temporary that the next keep removes once the writer is gone")
{
    test::TempTree tree;
    AnswerRecord record = trusting(tree);
    REQUIRE(record.keep("first", sample_answer(), FileAccesses{}, system_clock::now()) == "");
    std::string file = record.file_of("first").filename().string();
    // pid 2^22 - 1 is above Linux's pid limit: no process of that number runs.
    fs::path dead = tree.write("record/." + file + "." + host_name() + ".4194303.0.a1b2c3", "half");
    fs::path alive = tree.write("record/." + file + "." + host_name() + "." + std::to_string(::getpid()) + ".0.d4e5f6", "half");
    REQUIRE(record.keep("second", sample_answer(), FileAccesses{}, system_clock::now()) == "");
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(alive));
    CHECK(record.find("first"));
}
