// cunumpy's names in the cache: reading what is there, re-pointing them
// atomically, and the host entries' artifact paths.
#include "host/cunumpy_entry.hpp"
#include "util/temporary_name.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"

#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

TEST_SUITE_BEGIN("cunumpy_entry");

using namespace ck;
namespace fs = std::filesystem;

namespace {

const std::string suffix = ".cpython-311-x86_64-linux-gnu.so";

}  // namespace

TEST_CASE("what a cunumpy name holds: nothing, our link, or cunumpy's own folder")
{
    test::TempTree tree;
    CHECK(read_cunumpy_entry(tree.root(), "push_kernels-0123456789abcdef0123", suffix).kind ==
          CunumpyEntry::Kind::absent);
    tree.write("push_kernels-0123456789abcdef0123/push_kernels" + suffix, "elf");
    auto folder = read_cunumpy_entry(tree.root(), "push_kernels-0123456789abcdef0123", suffix);
    CHECK(folder.kind == CunumpyEntry::Kind::folder);
    CHECK(folder.path == tree / "push_kernels-0123456789abcdef0123");
    // A folder without the extension is nothing cunumpy can load.
    tree.write("sort_kernels-0123456789abcdef0123/other.txt", "");
    CHECK(read_cunumpy_entry(tree.root(), "sort_kernels-0123456789abcdef0123", suffix).kind ==
          CunumpyEntry::Kind::absent);
    fs::create_symlink("host/ab/abc/pk", tree / "deposit_kernels-0123456789abcdef0123");
    auto link = read_cunumpy_entry(tree.root(), "deposit_kernels-0123456789abcdef0123", suffix);
    CHECK(link.kind == CunumpyEntry::Kind::link);
    CHECK(link.target == "host/ab/abc/pk");
}

TEST_CASE("pointing a name: a new link, a moved link, and cunumpy's folder swapped out")
{
    test::TempTree tree;
    tree.write("host/aa/one/pk/push_kernels" + suffix, "one");
    tree.write("host/bb/two/pk/push_kernels" + suffix, "two");
    const std::string name = "push_kernels-0123456789abcdef0123";
    point_cunumpy_entry(tree.root(), name, "host/aa/one/pk");
    CHECK(fs::read_symlink(tree / name) == "host/aa/one/pk");
    point_cunumpy_entry(tree.root(), name, "host/bb/two/pk");
    CHECK(fs::read_symlink(tree / name) == "host/bb/two/pk");

    fs::remove(tree / name);
    tree.write(name + "/push_kernels" + suffix, "built by cunumpy");
    point_cunumpy_entry(tree.root(), name, "host/aa/one/pk");
    CHECK(fs::is_symlink(tree / name));
    CHECK(fs::is_regular_file(tree / name / ("push_kernels" + suffix)));
    // The folder cunumpy built is gone, not left in the temporary folder.
    std::error_code error;
    CHECK(fs::is_empty(tree / temporary_folder_name, error));
}

TEST_CASE("a reader never finds the name missing while it is re-pointed")
{
    test::TempTree tree;
    tree.write("host/aa/one/pk/push_kernels" + suffix, "one");
    tree.write("host/bb/two/pk/push_kernels" + suffix, "two");
    const std::string name = "push_kernels-0123456789abcdef0123";
    point_cunumpy_entry(tree.root(), name, "host/aa/one/pk");
    std::atomic<bool> done{false};
    std::atomic<int> misses{0};
    std::thread reader([&] {
        while (!done) {
            std::error_code error;
            if (!fs::is_regular_file(tree / name / ("push_kernels" + suffix), error)) ++misses;
        }
    });
    for (int i = 0; i < 300; ++i) point_cunumpy_entry(tree.root(), name, i % 2 ? "host/aa/one/pk" : "host/bb/two/pk");
    done = true;
    reader.join();
    CHECK(misses.load() == 0);
}

TEST_CASE("host entries name their artifact by a relative path of plain names")
{
    Manifest m;
    m.key = std::string(64, 'a');
    m.kind = "host";
    m.module = "pk.util.lin_kernels";
    m.target = "host";
    m.built_at = "2026-01-01T00:00:00Z";
    nlohmann::json j = m.to_json();
    j["artifacts"] = {{{"file", "pk/util/lin_kernels" + suffix}, {"target", "host"}, {"sha256", ""}, {"size", 1}}};
    CHECK(Manifest::from_json(j, "m.json").artifacts[0].file == "pk/util/lin_kernels" + suffix);
    for (const char* bad : {"../x.so", "pk/../../x.so", "/etc/passwd", "pk//x.so", ".hidden/x.so", "pk/", ""}) {
        j["artifacts"][0]["file"] = bad;
        CHECK_THROWS_AS(Manifest::from_json(j, "m.json"), CacheError);
    }
}

TEST_SUITE_END();
