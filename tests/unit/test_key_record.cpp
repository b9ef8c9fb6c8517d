// The key record: a kept key is taken only while every file its planning
// looked at is as it was; the runtime's first call takes it instead of
// planning, and plans again after any change of the family a compiler would
// see (bench/RESULTS.md, issue 14).
#include "cache/key_record.hpp"
#include "cunumpy_kernels/error.hpp"
#include "runtime/artifact_cache.hpp"
#include "util/checksummed.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include "runtime_package.hpp"
#include "scoped_env.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <functional>
#include <thread>

TEST_SUITE_BEGIN("key_record");

using namespace ck;
namespace fs = std::filesystem;
using std::chrono::system_clock;

namespace {

constexpr std::chrono::nanoseconds no_margin{0};

// `file` rewritten with `content` (same length), its modification time put back.
void rewrite_keeping_time(const fs::path& file, const std::string& content)
{
    struct stat before {};
    REQUIRE(::stat(file.c_str(), &before) == 0);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
}

struct RecordFixture {
    RecordFixture()
    {
        root = tree.root() / "cache";
        fs::create_directories(root);
        header = tree.write("src/common.cuh", "#define N 4\n");
        source = tree.write("src/k/k_cuda.cu", "#include \"common.cuh\"\n");
        missed = tree / "src/k/common.cuh";
        witnesses.files = {{missed.string(), std::nullopt, ""},
                           {header.string(), util::regular_file_stat(header.c_str()), sha256_hex("#define N 4\n")},
                           {source.string(), util::regular_file_stat(source.c_str()), ""}};
    }

    std::optional<std::string> find(const KeyRecord& record, std::optional<fs::path> late = std::nullopt) const
    {
        auto kept = record.find("question", [late] { return late; });
        return kept ? std::optional(kept->key) : std::nullopt;
    }

    // A reading of a manifest written now, of the entry `key`.
    ManifestReading manifest_reading(const std::string& key)
    {
        fs::path file = tree.write("cache/cuda/ab/" + key + "/manifest.json", "{}");
        ManifestReading reading{file, *util::regular_file_stat(file.c_str()), {}};
        reading.manifest.key = key;
        reading.manifest.kind = "cuda";
        reading.manifest.module = "sim.kernels.k";
        reading.manifest.kernel = "k";
        reading.manifest.entry_symbol = "_Z1kPd";
        reading.manifest.target = "sm_90";
        reading.manifest.artifacts = {{"k.sm_90.cubin", "sm_90", std::string(64, 'f'), 8344}};
        return reading;
    }

    std::optional<ManifestReading> kept_manifest(const KeyRecord& record) const
    {
        auto kept = record.find("question", {});
        REQUIRE(kept);
        return kept->manifest;
    }

    // The record's file with its body changed by `edit`, checksummed again.
    void forge(const KeyRecord& record, const std::function<void(std::string&)>& edit) const
    {
        fs::path file = record.file_of("question");
        std::string text = util::read_file(file);
        auto body = util::checksummed_body("cunumpy-kernels/key-record/2", text);
        REQUIRE(body);
        std::string forged(*body);
        edit(forged);
        std::ofstream(file, std::ios::binary | std::ios::trunc)
            << util::checksummed("cunumpy-kernels/key-record/2", forged);
    }

    test::TempTree tree;
    fs::path root, header, source, missed;
    KeyWitnesses witnesses;
};

}  // namespace

TEST_CASE_FIXTURE(RecordFixture, "a kept key is found while every witness holds")
{
    KeyRecord record(root, no_margin);
    CHECK_FALSE(find(record));
    record.keep("question", "abc123", witnesses, system_clock::now());
    CHECK(find(record) == "abc123");
    CHECK_FALSE(record.find("another question", {}));
    CHECK(fs::is_regular_file(record.file_of("question")));
}

TEST_CASE_FIXTURE(RecordFixture, "the reading of the entry's manifest is kept beside the key and given back with it")
{
    KeyRecord record(root, no_margin);
    ManifestReading reading = manifest_reading("abc123");
    record.keep("question", "abc123", witnesses, system_clock::now(), &reading);
    auto kept = kept_manifest(record);
    REQUIRE(kept);
    CHECK(kept->file.empty());
    CHECK(kept->seen == reading.seen);
    const Manifest& m = kept->manifest;
    CHECK(m.key == "abc123");
    CHECK(m.kind == "cuda");
    CHECK(m.module == "sim.kernels.k");
    CHECK(m.kernel == "k");
    CHECK(m.entry_symbol == "_Z1kPd");
    CHECK(m.target == "sm_90");
    REQUIRE(m.artifacts.size() == 1);
    CHECK(m.artifacts[0].file == "k.sm_90.cubin");
    CHECK(m.artifacts[0].target == "sm_90");
    CHECK(m.artifacts[0].sha256 == std::string(64, 'f'));
    CHECK(m.artifacts[0].size == 8344);
    // A field may hold the separators a line uses.
    reading.manifest.entry_symbol = "a 3:b";
    record.keep("question", "abc123", witnesses, system_clock::now(), &reading);
    CHECK(kept_manifest(record)->manifest.entry_symbol == "a 3:b");
}

TEST_CASE_FIXTURE(RecordFixture, "the key is kept without the manifest's reading when that reading cannot be trusted")
{
    KeyRecord record(root, no_margin);
    ManifestReading reading = manifest_reading("abc123");
    auto planned_at = system_clock::now();
    SUBCASE("a reading of another entry") { reading.manifest.key = "def456"; }
    SUBCASE("a manifest written after the planning started")
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        planned_at = system_clock::now();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the file system's clock tick
        reading = manifest_reading("abc123");
    }
    SUBCASE("a manifest rewritten since it was read") { tree.write("cache/cuda/ab/abc123/manifest.json", "{ }"); }
    SUBCASE("a manifest removed since it was read") { fs::remove(reading.file); }
    SUBCASE("a field with a newline") { reading.manifest.kernel = "k\nm"; }
    record.keep("question", "abc123", witnesses, planned_at, &reading);
    CHECK(find(record) == "abc123");
    CHECK_FALSE(kept_manifest(record));
}

TEST_CASE_FIXTURE(RecordFixture, "a reading is added to a record that kept the key without one")
{
    KeyRecord record(root, no_margin);
    record.keep("question", "abc123", witnesses, system_clock::now());
    REQUIRE(find(record) == "abc123");
    REQUIRE_FALSE(kept_manifest(record));
    ManifestReading reading = manifest_reading("abc123");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the file system's clock tick
    auto looked_up_at = system_clock::now();
    SUBCASE("added, the witnesses kept as they were")
    {
        record.add_manifest("question", "abc123", reading, looked_up_at);
        auto kept = kept_manifest(record);
        REQUIRE(kept);
        CHECK(kept->seen == reading.seen);
        CHECK(kept->manifest.entry_symbol == "_Z1kPd");
        rewrite_keeping_time(header, "#define N 5\n");
        CHECK_FALSE(find(record));
        return;
    }
    SUBCASE("not for another key")
    {
        record.add_manifest("question", "def456", manifest_reading("def456"), looked_up_at);
    }
    SUBCASE("not for a question without a record") { record.add_manifest("other", "abc123", reading, looked_up_at); }
    SUBCASE("not for a manifest changed since the lookup started")
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        reading = manifest_reading("abc123");
        record.add_manifest("question", "abc123", reading, looked_up_at);
    }
    SUBCASE("not for a manifest changed since it was read")
    {
        tree.write("cache/cuda/ab/abc123/manifest.json", "{ }");
        record.add_manifest("question", "abc123", reading, looked_up_at);
    }
    SUBCASE("not over a record written since the lookup started (another rank added it)")
    {
        record.add_manifest("question", "abc123", reading, looked_up_at - std::chrono::seconds(60));
    }
    SUBCASE("not over a reading already kept")
    {
        record.add_manifest("question", "abc123", reading, looked_up_at);
        ManifestReading other = reading;
        other.manifest.entry_symbol = "_Z1kPf";
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        record.add_manifest("question", "abc123", other, system_clock::now());
        REQUIRE(kept_manifest(record));
        CHECK(kept_manifest(record)->manifest.entry_symbol == "_Z1kPd");
        return;
    }
    CHECK(find(record) == "abc123");
    CHECK_FALSE(kept_manifest(record));
}

TEST_CASE_FIXTURE(RecordFixture, "a record whose manifest line is damaged is not read")
{
    KeyRecord record(root, no_margin);
    ManifestReading reading = manifest_reading("abc123");
    record.keep("question", "abc123", witnesses, system_clock::now(), &reading);
    REQUIRE(kept_manifest(record));
    auto line_edit = [](std::string from, std::string to) {
        return [from, to](std::string& body) {
            auto at = body.find(from);
            REQUIRE(at != std::string::npos);
            body.replace(at, from.size(), to);
        };
    };
    SUBCASE("a length past the line") { forge(record, line_edit("4:cuda", "9:cuda")); }
    SUBCASE("a length cut short") { forge(record, line_edit("4:cuda", "3:cuda")); }
    SUBCASE("an artifact count past what follows") { forge(record, line_edit("1:113:", "1:213:")); }
    SUBCASE("an artifact size that is not a number") { forge(record, line_edit("4:8344", "4:83x4")); }
    SUBCASE("an artifact outside the entry") { forge(record, line_edit("13:k.sm_90.cubin", "13:../../k.cubin")); }
    SUBCASE("no manifest line") { forge(record, line_edit("manifest ", "")); }
    SUBCASE("something after the last field") { forge(record, line_edit("4:8344", "4:83441:x")); }
    CHECK_FALSE(record.find("question", {}));
}

TEST_CASE_FIXTURE(RecordFixture,
                  "a record written since a planning started is left as it is: the first rank to finish writes")
{
    KeyRecord record(root, no_margin);
    record.keep("question", "abc123", witnesses, system_clock::now());
    // Written "later" than the next planning started.
    struct timespec future[2] = {{0, UTIME_OMIT}, {std::time(nullptr) + 60, 0}};
    REQUIRE(::utimensat(AT_FDCWD, record.file_of("question").c_str(), future, 0) == 0);
    record.keep("question", "def456", witnesses, system_clock::now());
    CHECK(find(record) == "abc123");
}

TEST_CASE_FIXTURE(RecordFixture, "any change a compiler would see loses the key")
{
    KeyRecord record(root, no_margin);
    record.keep("question", "abc123", witnesses, system_clock::now());
    REQUIRE(find(record) == "abc123");
    SUBCASE("a header edited in place, same size, its time put back") { rewrite_keeping_time(header, "#define N 5\n"); }
    SUBCASE("the source edited in place, same size, its time put back")
    {
        rewrite_keeping_time(source, "#include \"common.cuX\"\n");
    }
    SUBCASE("a header that appears earlier in the search") { tree.write("src/k/common.cuh", "#define N 4\n"); }
    SUBCASE("a header replaced by a rename of a copy")
    {
        tree.write("src/copy.cuh", "#define N 4\n");
        fs::rename(tree / "src/copy.cuh", header);
    }
    SUBCASE("a header removed") { fs::remove(header); }
    SUBCASE("a header's mode changed (its change time)")
    {
        fs::permissions(header, fs::perms::group_write, fs::perm_options::add);
    }
    SUBCASE("the source turned into a link to the same content elsewhere")
    {
        tree.write("src/elsewhere.cu", "#include \"common.cuh\"\n");
        fs::remove(source);
        fs::create_symlink(tree / "src/elsewhere.cu", source);
    }
    CHECK_FALSE(find(record));
}

TEST_CASE_FIXTURE(RecordFixture, "cunumpy's folder is asked again when the planning asked it")
{
    KeyRecord record(root, no_margin);
    witnesses.late_dir = std::optional<std::string>("/opt/cunumpy/include");
    record.keep("question", "abc123", witnesses, system_clock::now());
    CHECK(find(record, fs::path("/opt/cunumpy/include")) == "abc123");
    CHECK_FALSE(find(record, fs::path("/other/cunumpy/include")));
    CHECK_FALSE(find(record, std::nullopt));
    // Asked and unknown is an answer too.
    witnesses.late_dir = std::optional<std::string>();
    record.keep("question", "def456", witnesses, system_clock::now());
    CHECK(find(record, std::nullopt) == "def456");
    CHECK_FALSE(find(record, fs::path("/opt/cunumpy/include")));
}

TEST_CASE_FIXTURE(RecordFixture,
                  "nothing is kept that a change within the racy margin or during the planning could hide")
{
    SUBCASE("files changed within the margin before the planning")
    {
        KeyRecord record(root);  // the default margin: the files were just written
        record.keep("question", "abc123", witnesses, system_clock::now());
        CHECK_FALSE(fs::exists(record.file_of("question")));
    }
    SUBCASE("a file changed after the planning started")
    {
        KeyRecord record(root, no_margin);
        auto planned_at = system_clock::now() - std::chrono::seconds(5);
        record.keep("question", "abc123", witnesses, planned_at);
        CHECK_FALSE(fs::exists(record.file_of("question")));
    }
    SUBCASE("a path the planning missed that exists now")
    {
        KeyRecord record(root, no_margin);
        tree.write("src/k/common.cuh", "");
        record.keep("question", "abc123", witnesses, system_clock::now());
        CHECK_FALSE(fs::exists(record.file_of("question")));
    }
    SUBCASE("a path with a newline")
    {
        KeyRecord record(root, no_margin);
        witnesses.files.push_back({(tree / "src/a\nb.cuh").string(), std::nullopt, ""});
        record.keep("question", "abc123", witnesses, system_clock::now());
        CHECK_FALSE(fs::exists(record.file_of("question")));
    }
    SUBCASE("a file other than the one the planning asked about, with old times (a link re-pointed since)")
    {
        KeyRecord record(root, no_margin);
        witnesses.files[1].seen->inode += 1;
        record.keep("question", "abc123", witnesses, system_clock::now());
        CHECK_FALSE(fs::exists(record.file_of("question")));
    }
    SUBCASE("content other than the planning read (a link re-pointed and back)")
    {
        KeyRecord record(root, no_margin);
        witnesses.files[1].sha256 = sha256_hex("#define N 5\n");
        record.keep("question", "abc123", witnesses, system_clock::now());
        CHECK_FALSE(fs::exists(record.file_of("question")));
    }
    SUBCASE("a cache root that does not exist")
    {
        KeyRecord record(tree / "no-cache", no_margin);
        record.keep("question", "abc123", witnesses, system_clock::now());
        CHECK_FALSE(fs::exists(tree / "no-cache"));
    }
}

TEST_CASE_FIXTURE(RecordFixture, "a damaged, foreign or other-writable record is not read")
{
    KeyRecord record(root, no_margin);
    record.keep("question", "abc123", witnesses, system_clock::now());
    fs::path file = record.file_of("question");
    std::string text = util::read_file(file);
    SUBCASE("a byte flipped")
    {
        text[text.size() - 3] ^= 1;
        std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
        CHECK_FALSE(find(record));
    }
    SUBCASE("cut short")
    {
        std::ofstream(file, std::ios::binary | std::ios::trunc) << text.substr(0, text.size() / 2);
        CHECK_FALSE(find(record));
    }
    SUBCASE("kept by another build of the code, checksum and all")
    {
        auto body = util::checksummed_body("cunumpy-kernels/key-record/2", text);
        REQUIRE(body);
        std::string other = "another-build:1:2" + std::string(body->substr(body->find('\n')));
        std::ofstream(file, std::ios::binary | std::ios::trunc)
            << util::checksummed("cunumpy-kernels/key-record/2", other);
        CHECK_FALSE(find(record));
    }
    SUBCASE("writable by every user")
    {
        fs::permissions(file, fs::perms::others_write, fs::perm_options::add);
        CHECK_FALSE(KeyRecord(root, no_margin).find("question", {}));
    }
}

namespace {

// A package whose `push` includes a header from the source root, built once
// its files are older than the racy margin.
struct RuntimeFixture {
    RuntimeFixture()
    {
        package.tree.write("src/sim/common.cuh", "#define PUSH_SCALE 1.0\n");
        package.tree.write("src/sim/kernels/push/push_cuda.cu",
                           std::string("#include \"sim/common.cuh\"\n") + test::push_cuda);
        std::this_thread::sleep_for(KeyRecord::racy_margin + std::chrono::milliseconds(200));
        package.build({"sm_90"}, false);
        source = kernel_of_file(package.package() / "push/push_cuda.cu", package.config).value();
    }

    // A first call's lookup in a fresh process's cache: the entry found, if
    // any, and whether its key came from the record.
    std::pair<std::optional<std::string>, bool> first_lookup(const Config& config, bool read_only = false)
    {
        ArtifactCache cache(config, "sim", read_only, [](const std::string&) {});
        auto candidate = cache.find(source, {"sm_90", "cubin"});
        return {candidate ? std::optional(candidate->manifest.key) : std::nullopt, cache.keys_from_record() == 1};
    }

    test::RuntimePackage package;
    KernelSource source;
};

}  // namespace

TEST_CASE_FIXTURE(RuntimeFixture,
                  "a first call takes the key the last process planned, and plans again after any change")
{
    auto [planned, from_record] = first_lookup(package.config);
    REQUIRE(planned);
    CHECK_FALSE(from_record);
    auto [taken, taken_from_record] = first_lookup(package.config, true);
    CHECK(taken == planned);
    CHECK(taken_from_record);

    // Each change makes the built entry stale: a stale record would still find it.
    Config config = package.config;
    SUBCASE("the header edited, its time put back")
    {
        rewrite_keeping_time(package.tree / "src/sim/common.cuh", "#define PUSH_SCALE 2.0\n");
    }
    SUBCASE("a header of that name made earlier in the search (the kernel's folder)")
    {
        package.tree.write("src/sim/kernels/push/sim/common.cuh", "#define PUSH_SCALE 1.0\n");
    }
    SUBCASE("the source edited")
    {
        package.tree.write("src/sim/kernels/push/push_cuda.cu",
                           std::string("#include \"sim/common.cuh\"\n// edited\n") + test::push_cuda);
    }
    SUBCASE("another compiler option") { config.options = {"-DPUSH_FAST"}; }
    SUBCASE("the header moved to a folder given by -I")
    {
        package.tree.write("inc/sim/common.cuh", "#define PUSH_SCALE 1.0\n");
        fs::remove(package.tree / "src/sim/common.cuh");
        config.options = {"-I" + (package.tree / "inc").string()};
    }
    SUBCASE("the header removed, found instead in cunumpy's folder")
    {
        package.tree.write("cunumpy-include/sim/common.cuh", "#define PUSH_SCALE 1.0\n");
        fs::remove(package.tree / "src/sim/common.cuh");
        config.cunumpy_include_dir = package.tree / "cunumpy-include";
    }
    auto [after, after_from_record] = first_lookup(config);
    CHECK_FALSE(after_from_record);
    CHECK_FALSE(after);
}

TEST_CASE_FIXTURE(RuntimeFixture,
                  "a read-only cache keeps no record; a writable one keeps it once the files are old enough")
{
    first_lookup(package.config, true);
    CHECK_FALSE(first_lookup(package.config, true).second);
    first_lookup(package.config);
    CHECK(first_lookup(package.config, true).second);
}

TEST_CASE_FIXTURE(RuntimeFixture,
                  "CUNUMPY_KERNELS_KEY_RECORD: off plans every time and keeps nothing; check plans behind a kept key")
{
    {
        test::ScopedEnv off("CUNUMPY_KERNELS_KEY_RECORD", "off");
        CHECK(first_lookup(package.config).first);
        CHECK_FALSE(first_lookup(package.config).second);
        CHECK_FALSE(fs::exists(package.cache() / ".keys"));
    }
    auto [planned, from_record] = first_lookup(package.config);
    REQUIRE(planned);
    {
        test::ScopedEnv check("CUNUMPY_KERNELS_KEY_RECORD", "check");
        CHECK(first_lookup(package.config) == std::pair(planned, true));
        // A kept key no plan gives (a witness missed) fails the check, naming both keys.
        fs::path file;
        for (const auto& entry : fs::directory_iterator(package.cache() / ".keys")) file = entry.path();
        std::string text = util::read_file(file);
        auto body = util::checksummed_body("cunumpy-kernels/key-record/2", text);
        REQUIRE(body);
        std::string forged(*body);
        forged.replace(forged.find(*planned), planned->size(), std::string(64, '0'));
        std::ofstream(file, std::ios::binary | std::ios::trunc)
            << util::checksummed("cunumpy-kernels/key-record/2", forged);
        CHECK_THROWS_WITH_AS(first_lookup(package.config), doctest::Contains(std::string(64, '0').c_str()),
                             ArtifactError);
    }
    test::ScopedEnv wrong("CUNUMPY_KERNELS_KEY_RECORD", "sometimes");
    CHECK_THROWS_AS(first_lookup(package.config), UsageError);
}

TEST_CASE_FIXTURE(RuntimeFixture,
                  "a folder re-pointed between two targets' keys of one process keeps no record of the later")
{
    // An include folder given as a link, re-pointed after the first target
    // was planned: the later target's key comes from the earlier reading.
    package.tree.write("incA/sim/extra.cuh", "#define EXTRA 1\n");
    package.tree.write("incB/sim/extra.cuh", "#define EXTRA 2\n");
    fs::create_directory_symlink(package.tree / "incA", package.tree / "inc");
    package.tree.write("src/sim/kernels/push/push_cuda.cu",
                       std::string("#include <sim/extra.cuh>\n#include \"sim/common.cuh\"\n") + test::push_cuda);
    Config config = package.config;
    config.include_dirs = {package.tree / "inc"};
    std::this_thread::sleep_for(KeyRecord::racy_margin + std::chrono::milliseconds(200));
    {
        ArtifactCache cache(config, "sim", false, [](const std::string&) {});
        cache.find(source, {"sm_90", "cubin"});
        fs::remove(package.tree / "inc");
        fs::create_directory_symlink(package.tree / "incB", package.tree / "inc");
        cache.find(source, {"sm_80", "cubin"});
    }
    test::ScopedEnv check("CUNUMPY_KERNELS_KEY_RECORD", "check");
    ArtifactCache fresh(config, "sim", true, [](const std::string&) {});
    CHECK_NOTHROW(fresh.find(source, {"sm_80", "cubin"}));
    CHECK_NOTHROW(fresh.find(source, {"sm_90", "cubin"}));
}

TEST_CASE_FIXTURE(RuntimeFixture, "relative include folders are taken as they were when the planner was made")
{
    package.tree.write("inc/sim/extra.cuh", "#define EXTRA 1\n");
    package.tree.write("other/inc/sim/extra.cuh", "#define EXTRA 2\n");
    package.tree.write("src/sim/kernels/push/push_cuda.cu",
                       std::string("#include <sim/extra.cuh>\n#include \"sim/common.cuh\"\n") + test::push_cuda);
    std::this_thread::sleep_for(KeyRecord::racy_margin + std::chrono::milliseconds(200));
    fs::path before = fs::current_path();
    Config config = package.config;
    config.options = {"-Iinc"};
    fs::current_path(package.tree.root());
    {
        ArtifactCache cache(config, "sim", false, [](const std::string&) {});
        cache.find(source, {"sm_90", "cubin"});
        fs::current_path(package.tree / "other");
        cache.find(source, {"sm_80", "cubin"});
    }
    {
        test::ScopedEnv check("CUNUMPY_KERNELS_KEY_RECORD", "check");
        ArtifactCache fresh(config, "sim", true, [](const std::string&) {});
        CHECK_NOTHROW(fresh.find(source, {"sm_80", "cubin"}));
        fs::current_path(package.tree.root());
        ArtifactCache back(config, "sim", true, [](const std::string&) {});
        CHECK_NOTHROW(back.find(source, {"sm_80", "cubin"}));
    }
    fs::current_path(before);
}

TEST_CASE_FIXTURE(RuntimeFixture, "a record naming another kernel's entry loads nothing of it")
{
    auto [planned, from_record] = first_lookup(package.config);
    REQUIRE(planned);
    KernelSource scale = kernel_of_file(package.package() / "scale/scale_cuda.cu", package.config).value();
    package.build({"sm_90"}, false);
    ArtifactCache cache(package.config, "sim", true, [](const std::string&) {});
    auto scale_entry = cache.find(scale, {"sm_90", "cubin"});
    REQUIRE(scale_entry);
    fs::path file;
    for (const auto& entry : fs::directory_iterator(package.cache() / ".keys")) file = entry.path();
    std::string text = util::read_file(file);  // the body is a view into it
    auto body = util::checksummed_body("cunumpy-kernels/key-record/2", text);
    REQUIRE(body);
    std::string forged(*body);
    forged.replace(forged.find(*planned), planned->size(), scale_entry->manifest.key);
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        << util::checksummed("cunumpy-kernels/key-record/2", forged);
    ArtifactCache fresh(package.config, "sim", true, [](const std::string&) {});
    CHECK_THROWS_WITH_AS(fresh.find(source, {"sm_90", "cubin"}), doctest::Contains("holds kernel 'scale'"),
                         ArtifactError);
}

TEST_CASE_FIXTURE(RuntimeFixture,
                  "a first call takes the entry's manifest from the record, and reads the file again after any change")
{
    std::this_thread::sleep_for(KeyRecord::racy_margin + std::chrono::milliseconds(200));  // the entry is older now
    auto [planned, from_record] = first_lookup(package.config);
    REQUIRE(planned);
    fs::path manifest = package.cache() / "cuda" / planned->substr(0, 2) / *planned / "manifest.json";
    auto taken = [&](const Config& config) {
        ArtifactCache cache(config, "sim", true, [](const std::string&) {});
        auto candidate = cache.find(source, {"sm_90", "cubin"});
        return std::pair(candidate, cache.manifests_from_record() == 1);
    };
    {
        auto [candidate, from_record] = taken(package.config);
        REQUIRE(candidate);
        CHECK(from_record);
        Manifest file = Manifest::without_inputs(util::read_file(manifest), "manifest.json");
        CHECK(candidate->manifest.entry_symbol == file.entry_symbol);
        CHECK(candidate->manifest.kernel == file.kernel);
        CHECK(candidate->manifest.target == file.target);
        REQUIRE(candidate->manifest.artifacts.size() == file.artifacts.size());
        CHECK(candidate->manifest.artifacts[0].sha256 == file.artifacts[0].sha256);
        CHECK(candidate->manifest.artifacts[0].size == file.artifacts[0].size);
    }
    std::string text = util::read_file(manifest);
    std::string symbol = "\"entry_symbol\": \"push\"";
    REQUIRE(text.find(symbol) != std::string::npos);
    std::string edited = text;
    edited.replace(edited.find(symbol), symbol.size(), "\"entry_symbol\": \"pusx\"");
    auto expect_read_again = [&] {
        auto [candidate, from_record] = taken(package.config);
        REQUIRE(candidate);
        CHECK_FALSE(from_record);
        CHECK(candidate->manifest.entry_symbol == "pusx");
    };
    SUBCASE("the manifest edited in place, same size, its time put back")
    {
        rewrite_keeping_time(manifest, edited);
        expect_read_again();
    }
    SUBCASE("the manifest replaced by a rename of an edited copy")
    {
        std::ofstream(manifest.string() + ".new", std::ios::binary) << edited;
        fs::rename(manifest.string() + ".new", manifest);
        expect_read_again();
    }
    SUBCASE("the manifest replaced by a link to an edited copy")
    {
        std::ofstream(manifest.string() + ".copy", std::ios::binary) << edited;
        fs::remove(manifest);
        fs::create_symlink(manifest.string() + ".copy", manifest);
        expect_read_again();
    }
    SUBCASE("the entry removed")
    {
        fs::remove_all(manifest.parent_path());
        CHECK_FALSE(taken(package.config).first);
    }
    SUBCASE("the entry built again")
    {
        fs::remove_all(manifest.parent_path());
        package.build({"sm_90"}, false);
        auto [candidate, from_record] = taken(package.config);
        REQUIRE(candidate);
        CHECK(candidate->manifest.key == *planned);
        CHECK_FALSE(from_record);
    }
    SUBCASE("the manifest's artifact truncated: the entry is unusable, as without the record")
    {
        fs::resize_file(manifest.parent_path() / "push.sm_90.cubin", 10);
        CHECK_THROWS_WITH_AS(taken(package.config), doctest::Contains("missing or truncated"), ArtifactError);
    }
}

TEST_CASE_FIXTURE(RuntimeFixture, "CUNUMPY_KERNELS_KEY_RECORD=check reads every manifest behind the record's reading")
{
    std::this_thread::sleep_for(KeyRecord::racy_margin + std::chrono::milliseconds(200));
    auto [planned, from_record] = first_lookup(package.config);
    REQUIRE(planned);
    test::ScopedEnv check("CUNUMPY_KERNELS_KEY_RECORD", "check");
    {
        ArtifactCache cache(package.config, "sim", true, [](const std::string&) {});
        REQUIRE(cache.find(source, {"sm_90", "cubin"}));
        CHECK(cache.manifests_from_record() == 0);
    }
    fs::path file;
    for (const auto& entry : fs::directory_iterator(package.cache() / ".keys")) file = entry.path();
    std::string text = util::read_file(file);
    auto body = util::checksummed_body("cunumpy-kernels/key-record/2", text);
    REQUIRE(body);
    std::string forged(*body);
    auto at = forged.find("4:push4:push");
    REQUIRE(at != std::string::npos);
    forged.replace(at, 12, "4:push4:pusx");
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        << util::checksummed("cunumpy-kernels/key-record/2", forged);
    ArtifactCache cache(package.config, "sim", true, [](const std::string&) {});
    CHECK_THROWS_WITH_AS(cache.find(source, {"sm_90", "cubin"}), doctest::Contains("differs"), ArtifactError);
}

TEST_CASE_FIXTURE(RuntimeFixture,
                  "a key kept while its entry was too new gains the manifest's reading at a later first call")
{
    // The entry was built just now: the key is kept, the manifest's reading not.
    auto [planned, from_record] = first_lookup(package.config);
    REQUIRE(planned);
    auto manifests_taken = [&](bool read_only) {
        ArtifactCache cache(package.config, "sim", read_only, [](const std::string&) {});
        REQUIRE(cache.find(source, {"sm_90", "cubin"}));
        CHECK(cache.keys_from_record() == 1);
        return cache.manifests_from_record();
    };
    CHECK(manifests_taken(true) == 0);
    std::this_thread::sleep_for(KeyRecord::racy_margin + std::chrono::milliseconds(200));
    CHECK(manifests_taken(true) == 0);   // a read-only cache adds nothing
    CHECK(manifests_taken(false) == 0);  // read, and added
    CHECK(manifests_taken(true) == 1);
}
