// The stat-keyed record of source digests and facts: what it takes on trust
// (an unchanged, old enough stat), what it reads again (a changed stat, a
// file written within the racy margin), and the remembered declaration
// readings, which hold only while their headers resolve to the same content.
#include "source/source_record.hpp"
#include "builder/cuda_build.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "cunumpy_kernels/error.hpp"
#include "signatures/kernel_declaration.hpp"
#include "util/sha256.hpp"
#include "util/temporary_name.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>

TEST_SUITE_BEGIN("source_record");

using namespace ck;
namespace fs = std::filesystem;

namespace {

// Setting times moves a file's change time to now, which the record's margin
// (2 s) would not trust before 2 s have passed: most tests trust at once.
constexpr std::chrono::nanoseconds trusting{0};

// Dates `file`'s modification time an hour back.
void age(const fs::path& file, long seconds = 3600)
{
    struct timespec times[2];
    ::clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= seconds;
    times[1] = times[0];
    REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
}

struct timespec modified_of(const fs::path& file)
{
    struct stat info {};
    REQUIRE(::stat(file.c_str(), &info) == 0);
    return info.st_mtim;
}

void set_modified(const fs::path& file, const struct timespec& when)
{
    const struct timespec times[2] = {when, when};
    REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
}

// A run that takes `file`'s digest and saves the record at `stored`.
void remember(const fs::path& file, const fs::path& stored, std::chrono::nanoseconds margin = trusting)
{
    SourceRecord record(stored, margin);
    record.digest(file);
    record.save();
}

nlohmann::json count_lines(const std::string& bytes, int& calls)
{
    ++calls;
    return static_cast<int>(std::count(bytes.begin(), bytes.end(), '\n'));
}

// An old file a.py of two lines, where its record goes, and a question
// about it that counts how often it is answered.
struct CountedLines {
    test::TempTree tree;
    fs::path file = tree.write("a.py", "a\nb\n");
    fs::path stored = tree / "record/sources";
    int calls = 0;
    std::function<nlohmann::json(const std::string&)> lines = [this](const std::string& bytes) {
        return count_lines(bytes, calls);
    };

    CountedLines() { age(file); }
};

}  // namespace

TEST_CASE("an old unchanged file is taken from the record, unread")
{
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");
    age(file);
    fs::path stored = tree / "record/sources";
    {
        SourceRecord record(stored, trusting);
        CHECK(record.digest(file) == sha256_hex("x = 1\n"));
        CHECK(record.files_read() == 1);
        record.save();
    }
    REQUIRE(fs::exists(stored));
    SourceRecord again(stored, trusting);
    CHECK(again.digest(file) == sha256_hex("x = 1\n"));
    CHECK(again.files_read() == 0);
}

TEST_CASE("a file modified within the racy margin is hashed again on every run")
{
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");  // modified now
    fs::path stored = tree / "record/sources";
    remember(file, stored, SourceRecord::racy_margin);
    // Same size, same modification time: only a new hash can tell.
    struct timespec before = modified_of(file);
    std::ofstream(file, std::ios::binary) << "x = 2\n";
    set_modified(file, before);
    SourceRecord again(stored);
    CHECK(again.digest(file) == sha256_hex("x = 2\n"));
    CHECK(again.files_read() == 1);
}

TEST_CASE("a recent change time is not trusted, whatever the modification time says")
{
    // Within one tick of a coarse clock a rewrite can keep every time; only
    // times older than the margin rule that out.
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");
    age(file);  // an old modification time, a change time of now
    fs::path stored = tree / "record/sources";
    remember(file, stored, SourceRecord::racy_margin);
    SourceRecord again(stored);
    again.digest(file);
    CHECK(again.files_read() == 1);
}

TEST_CASE("a record with a damaged byte is an empty one")
{
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");
    fs::path stored = tree / "record/sources";
    int calls = 0;
    auto lines = [&](const std::string& bytes) { return count_lines(bytes, calls); };
    {
        SourceRecord record(stored, trusting);
        record.fact(file, "lines", lines);
        record.save();
    }
    std::string bytes;
    {
        std::ifstream in(stored, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    for (std::size_t at : {bytes.size() / 2, bytes.size() - 3}) {
        std::string damaged = bytes;
        damaged[at] = static_cast<char>(damaged[at] ^ 0x20);
        std::ofstream(stored, std::ios::binary | std::ios::trunc) << damaged;
        SourceRecord record(stored, trusting);
        CHECK(record.fact(file, "lines", lines) == 1);
        CHECK(record.files_read() == 1);
    }
    CHECK(calls == 3);
}

TEST_CASE("an old file changed since is read again, whatever times it keeps")
{
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");
    age(file);
    fs::path stored = tree / "record/sources";
    remember(file, stored);
    SUBCASE("rewritten with its size and modification time kept")
    {
        struct timespec before = modified_of(file);
        std::ofstream(file, std::ios::binary) << "x = 2\n";
        set_modified(file, before);  // as `tar x` or `touch -r` leave it; the change time moves
        CHECK(SourceRecord(stored, trusting).digest(file) == sha256_hex("x = 2\n"));
    }
    SUBCASE("replaced by another old file (a new inode)")
    {
        fs::path other = tree.write("b.py", "x = 3\n");
        age(other);
        fs::rename(other, file);
        CHECK(SourceRecord(stored, trusting).digest(file) == sha256_hex("x = 3\n"));
    }
}

TEST_CASE_FIXTURE(CountedLines, "facts are answered once per content and again when the content changes")
{
    {
        SourceRecord record(stored, trusting);
        CHECK(record.fact(file, "lines", lines) == 2);
        CHECK(record.fact(file, "lines", lines) == 2);
        CHECK(calls == 1);
        record.save();
    }
    {
        SourceRecord record(stored, trusting);
        CHECK(record.fact(file, "lines", lines) == 2);
        CHECK(calls == 1);
        CHECK(record.files_read() == 0);
        std::string digest;
        record.fact(file, "lines", lines, &digest);
        CHECK(digest == sha256_hex("a\nb\n"));
    }
    std::ofstream(file, std::ios::binary) << "a\nb\nc\n";
    SourceRecord record(stored, trusting);
    CHECK(record.fact(file, "lines", lines) == 3);
    CHECK(calls == 2);
}

TEST_CASE("a damaged or foreign record is an empty one, and an unreadable file an error")
{
    test::TempTree tree;
    fs::path stored = tree.write("record/sources", "not a record");
    fs::path file = tree.write("a.py", "x = 1\n");
    SourceRecord record(stored, trusting);
    CHECK(record.digest(file) == sha256_hex("x = 1\n"));
    CHECK_THROWS_AS(record.digest(tree / "missing.py"), SourceError);
    record.save();
    SourceRecord again(stored, trusting);
    CHECK(again.digest(file) == sha256_hex("x = 1\n"));
}

namespace {

// The record's body decoded, changed by `edit`, and stored again with a
// checksum that fits: what another writer could leave.
void rewrite_body(const fs::path& stored, const std::function<void(nlohmann::json&)>& edit)
{
    using nlohmann::json;
    std::ifstream in(stored, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t line_end = bytes.find('\n');
    REQUIRE(line_end != std::string::npos);
    std::string format = bytes.substr(0, bytes.find(' '));
    json body = json::from_msgpack(bytes.substr(line_end + 1));
    edit(body);
    std::vector<std::uint8_t> packed = json::to_msgpack(body);
    std::string packed_bytes(packed.begin(), packed.end());
    std::ofstream(stored, std::ios::binary | std::ios::trunc) << format << ' ' << sha256_hex(packed_bytes) << '\n'
                                                              << packed_bytes;
}

}  // namespace

TEST_CASE_FIXTURE(
    CountedLines,
    "a body of another layout is an empty record; facts of another build of the tool are dropped, digests kept")
{
    {
        SourceRecord record(stored, trusting);
        record.fact(file, "lines", lines);
        record.save();
    }
    SUBCASE("an entry with a field missing")
    {
        rewrite_body(stored, [&](nlohmann::json& body) { body["files"][file.string()].erase(6); });
        SourceRecord record(stored, trusting);
        CHECK(record.fact(file, "lines", lines) == 2);
        CHECK(record.files_read() == 1);
        CHECK(calls == 2);
    }
    SUBCASE("a section it does not know")
    {
        rewrite_body(stored, [](nlohmann::json& body) { body["more"] = 1; });
        SourceRecord record(stored, trusting);
        CHECK(record.digest(file) == sha256_hex("a\nb\n"));
        CHECK(record.files_read() == 1);
    }
    SUBCASE("written by another build")
    {
        rewrite_body(stored, [](nlohmann::json& body) { body["code"] = "/elsewhere/cunumpy-kernels:1:2"; });
        SourceRecord record(stored, trusting);
        CHECK(record.fact(file, "lines", lines) == 2);
        CHECK(calls == 2);
        CHECK(record.files_read() == 1);  // read to answer; the digest alone would have come from the record
        SourceRecord digests(stored, trusting);
        digests.digest(file);
        CHECK(digests.files_read() == 0);
    }
}

TEST_CASE("a file is read once a run while its stat holds, and again when it changes")
{
    test::TempTree tree;
    fs::path file = tree.write("a.cu", "one\n");
    age(file);
    SourceRecord record(std::nullopt, trusting);
    std::string digest;
    CHECK(record.read(file, &digest) == "one\n");
    CHECK(record.read(file) == "one\n");
    CHECK(record.files_read() == 1);
    std::ofstream(file, std::ios::binary | std::ios::app) << "two\n";
    CHECK(record.read(file, &digest) == "one\ntwo\n");
    CHECK(digest == sha256_hex("one\ntwo\n"));
    CHECK(record.files_read() == 2);
}

TEST_CASE("an answer is computed once per content, and again when what else it read changed")
{
    test::TempTree tree;
    fs::path file = tree.write("a.cu", "one\n");
    age(file);
    fs::path stored = tree / "record/sources";
    int computed = 0;
    auto compute = [&] { return nlohmann::json(++computed); };
    std::string digest;
    {
        SourceRecord record(stored, trusting);
        digest = record.digest(file);
        CHECK(record.answer(digest, "q", compute) == 1);
        CHECK(record.answer(digest, "q", compute) == 1);
        CHECK(record.answer(digest, "other q", compute) == 2);
        CHECK(record.answer(digest, "checked", compute, [](const nlohmann::json&) { return false; }) == 3);
        record.save();  // computed in this run: taken as holding, never asked
    }
    int asked = 0;
    bool holds = true;
    auto still_holds = [&](const nlohmann::json&) { return ++asked, holds; };
    {
        SourceRecord record(stored, trusting);
        CHECK(record.answer(digest, "q", compute) == 1);
        CHECK(record.answer(digest, "checked", compute, still_holds) == 3);
        CHECK(record.answer(digest, "checked", compute, still_holds) == 3);
        CHECK(asked == 1);  // once a run
    }
    holds = false;
    SourceRecord record(stored, trusting);
    CHECK(record.answer(digest, "checked", compute, still_holds) == 4);
    CHECK(computed == 4);
}

TEST_CASE("a FIFO or a device at the record's path is an empty record, never waited on")
{
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");
    fs::path stored = tree / "record/sources";
    fs::create_directories(stored.parent_path());
    SUBCASE("a FIFO") { REQUIRE(::mkfifo(stored.c_str(), 0600) == 0); }
    SUBCASE("a link to /dev/zero") { fs::create_symlink("/dev/zero", stored); }
    SourceRecord record(stored, trusting);
    CHECK(record.digest(file) == sha256_hex("x = 1\n"));
    record.save();
    CHECK(fs::is_regular_file(fs::symlink_status(stored)));
    CHECK(SourceRecord(stored, trusting).digest(file) == sha256_hex("x = 1\n"));
}

TEST_CASE("a save removes the temporaries of writers that died before their rename, not a live one's")
{
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");
    fs::path stored = tree / "record/sources";
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    REQUIRE(child > 0);
    REQUIRE(::waitpid(child, nullptr, 0) == child);
    fs::path dead =
        tree.write("record/.sources." + process_scope() + "." + std::to_string(child) + ".0.abcdef", "half");
    fs::path live =
        tree.write("record/.sources." + process_scope() + "." + std::to_string(::getpid()) + ".7.abcdef", "half");
    fs::path other =
        tree.write("record/.other." + process_scope() + "." + std::to_string(child) + ".0.abcdef", "not ours");
    SourceRecord record(stored, trusting);
    record.digest(file);
    record.save();
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(live));
    CHECK(fs::exists(other));
}

TEST_CASE("a record without a file remembers within the process only")
{
    test::TempTree tree;
    fs::path file = tree.write("a.py", "x = 1\n");
    SourceRecord record(std::nullopt);
    record.digest(file);
    record.save();
    CHECK(std::distance(fs::directory_iterator(tree.root()), fs::directory_iterator()) == 1);  // a.py alone
    CHECK(record.digest(file) == sha256_hex("x = 1\n"));
}

TEST_CASE("a record kept in a process hashes a recent file at every ask; a run's record once a run")
{
    // On a coarse clock a rewrite within one tick keeps size, mtime and ctime:
    // only a stat older than the margin is proof. A CLI run takes the file
    // system as it was when first asked; a process (the runtime's) may live long.
    test::TempTree tree;
    fs::path file = tree.write("common.cuh", "#define ARG double\n");  // just written: within the margin
    SourceRecord in_process(std::nullopt);
    CHECK(in_process.digest(file) == sha256_hex("#define ARG double\n"));
    CHECK(in_process.digest(file) == sha256_hex("#define ARG double\n"));
    CHECK(in_process.files_read() == 2);
    SourceRecord run(tree / "record/sources");
    run.digest(file);
    run.digest(file);
    CHECK(run.files_read() == 1);
}

TEST_CASE("a remembered declaration reading holds while its headers are the same")
{
    test::TempTree tree;
    fs::path header = tree.write("common.cuh", "#define KERNEL __global__ void\n");
    age(header);
    KernelSource kernel;
    kernel.name = "push";
    kernel.module = "sim.push";
    kernel.folder = tree / "sim/push";
    kernel.source_root = tree.root();
    std::string source = "#include \"common.cuh\"\n#include \"extra.cuh\"\nKERNEL push(double* x, int n) {}\n";
    kernel.cuda_file = tree.write("sim/push/push_cuda.cu", source);
    fs::path stored = tree / "record/sources";
    auto parameters = [&] {
        SourceRecord record(stored, trusting);
        auto declaration = signatures::read_kernel_declaration(kernel, Config{}, source, nullptr, &record);
        record.save();
        return declaration.read.parameters;
    };
    using Names = std::vector<std::string>;
    CHECK(parameters() == Names{"x", "n"});
    CHECK(parameters() == Names{"x", "n"});

    SUBCASE("the header's content changes")
    {
        std::ofstream(header, std::ios::binary) << "#define KERNEL __global__ void\n#define n count\n";
        CHECK(parameters() == Names{"x", "count"});
    }
    SUBCASE("a header of the same name appears earlier in the search")
    {
        // Quoted names are looked up beside the including file first.
        tree.write("sim/push/common.cuh", "#define KERNEL __global__ void\n#define x first\n");
        CHECK(parameters() == Names{"first", "n"});
    }
    SUBCASE("a header that was missing appears")
    {
        tree.write("extra.cuh", "#define n count\n");
        CHECK(parameters() == Names{"x", "count"});
    }
    SUBCASE("the source changes")
    {
        source = "#include \"common.cuh\"\nKERNEL push(double* y, int n) {}\n";
        CHECK(parameters() == Names{"y", "n"});
    }
}

TEST_CASE("a planned kernel's headers changed since planning are named, from a fresh scan")
{
    // What a build checks after each compile: the compiler read the headers
    // from disk, so a header saved meanwhile must not publish under the old key.
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    fs::path header = tree.write("src/common.cuh", "#define SCALE 1.25\n");
    tree.kernel("src/sim", "push",
                "#include \"common.cuh\"\n__global__ void push(double* x, int n) { x[0] *= SCALE; }\n");
    Config config;
    config.architectures = {"sm_90"};
    config.ptx = false;
    auto kernels = find_kernels({tree / "src"}, config);
    REQUIRE(kernels.size() == 1);
    SourceRecord record(std::nullopt);
    CudaPlanner planner(config, "nvrtc 99.9 (fake)", [] { return std::nullopt; });
    planner.use_record(&record);
    auto jobs = planner.plan(kernels[0]);
    REQUIRE(jobs.size() == 1);
    CHECK(inputs_changed_since(planner, jobs[0]).empty());
    SUBCASE("the header's content")
    {
        tree.write("src/common.cuh", "#define SCALE 1.75\n");
        CHECK(inputs_changed_since(planner, jobs[0]) == "header common.cuh changed");
    }
    SUBCASE("a header of the name appears earlier in the search")
    {
        tree.write("src/sim/push/common.cuh", "#define SCALE 2.0\n");
        CHECK_FALSE(inputs_changed_since(planner, jobs[0]).empty());
    }
    SUBCASE("the header is removed")
    {
        fs::remove(header);
        CHECK(inputs_changed_since(planner, jobs[0]).find("an included header changed") == 0);
    }
}

TEST_SUITE_END();
