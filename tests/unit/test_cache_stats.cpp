// Hits and misses kept per process and folded by `cache info`, and the
// refusal of caches other users can write.
#include "cache/cache_stats.hpp"
#include "cache/write_access.hpp"
#include "cache_admin/cache_maintenance.hpp"

#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <set>

TEST_SUITE_BEGIN("cache_stats");

using namespace ck;
namespace fs = std::filesystem;

namespace {

std::size_t files_in(const fs::path& folder)
{
    std::size_t n = 0;
    std::error_code error;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
        n += it->path().extension() == ".json" ? 1 : 0;
    return n;
}

void chmod(const fs::path& path, mode_t mode) { REQUIRE(::chmod(path.c_str(), mode) == 0); }

}  // namespace

TEST_CASE("3 processes' counters sum, fold into 1 file, and zero to 0")
{
    test::TempTree tree;
    EntryStore store(tree.root());
    add_counters(tree.root(), {2, 1, 0, 0});
    add_counters(tree.root(), {0, 0, 5, 1});
    add_counters(tree.root(), {1, 0, 0, 0});
    add_counters(tree.root(), {});  // nothing counted: no file
    CHECK(files_in(tree.root() / ".stats") == 3);

    CacheStatistics statistics = read_statistics(store);
    CHECK(statistics.counters.build_hits == 3);
    CHECK(statistics.counters.build_misses == 1);
    CHECK(statistics.counters.load_hits == 5);
    CHECK(statistics.counters.load_misses == 1);
    CHECK(statistics.since.empty());
    CHECK(files_in(tree.root() / ".stats") == 1);           // folded into total.json
    CHECK(read_statistics(store).counters.load_hits == 5);  // folding loses nothing

    zero_statistics(store);
    statistics = read_statistics(store);
    CHECK(statistics.counters.empty());
    CHECK_FALSE(statistics.since.empty());
    add_counters(tree.root(), {0, 0, 1, 0});
    CHECK(read_statistics(store).counters.load_hits == 1);
}

TEST_CASE("damaged counters count 0, and reading the statistics of a missing root creates nothing")
{
    test::TempTree tree;
    tree.write(".stats/total.json", "{\"build_hits\": \"x\", \"load_hits\": -2, \"load_misses\": 3}");
    tree.write(".stats/a.json", "not json");
    CacheStatistics statistics = read_statistics(EntryStore(tree.root()));
    CHECK(statistics.counters.build_hits == 0);
    CHECK(statistics.counters.load_hits == 0);
    CHECK(statistics.counters.load_misses == 3);
    CHECK(read_statistics(EntryStore(tree.root() / "nosuch")).counters.empty());
    CHECK_FALSE(fs::exists(tree.root() / "nosuch"));
}

TEST_CASE("a lock file another member of the group created still locks: zero works")
{
    test::TempTree tree;
    add_counters(tree.root(), {1, 0, 0, 0});
    tree.write(".stats/.lock", "");
    chmod(tree.root() / ".stats/.lock", 0444);
    zero_statistics(EntryStore(tree.root()));
    CHECK(read_statistics(EntryStore(tree.root())).counters.empty());
}

TEST_CASE("a root, folder or file that every user can write is refused with the fix; group write is fine")
{
    test::TempTree tree;
    fs::path root = tree.root() / "cache";
    fs::path entry = root / "cuda" / "ab" / "abcd";
    tree.write("cache/cuda/ab/abcd/push.sm_90.cubin", "ELF");
    chmod(root, 02775);
    chmod(entry, 0775);
    CHECK(other_writable_problem(root, entry, {"push.sm_90.cubin"}).empty());

    chmod(root / "cuda" / "ab", 0777);
    std::string problem = other_writable_problem(root, entry, {"push.sm_90.cubin"});
    CHECK(problem.find((root / "cuda" / "ab").string() + " can be written by every user (mode 0777)") == 0);
    CHECK(problem.find("chmod o-w " + (root / "cuda" / "ab").string()) != std::string::npos);
    chmod(root / "cuda" / "ab", 0755);

    chmod(entry / "push.sm_90.cubin", 0666);
    CHECK(other_writable_problem(root, entry, {"push.sm_90.cubin"}).find("push.sm_90.cubin can be written") !=
          std::string::npos);
    chmod(root, 0777);
    CHECK(other_writable_problem(root).find(root.string() + " can be written") == 0);
}

TEST_CASE("a plan's folders found fine are checked once; every entry's own folder and files still are")
{
    test::TempTree tree;
    fs::path root = tree.root() / "cache";
    fs::path first = root / "cuda" / "ab" / "ab01";
    fs::path second = root / "cuda" / "ab" / "ab02";
    tree.write("cache/cuda/ab/ab01/k.sm_90.cubin", "ELF");
    tree.write("cache/cuda/ab/ab02/k.sm_90.cubin", "ELF");
    for (const auto& path : {root, root / "cuda", root / "cuda" / "ab", first, second}) chmod(path, 0755);
    ClearedFolders cleared;
    CHECK(other_writable_problem(root, first, {"k.sm_90.cubin"}, &cleared).empty());
    for (const auto& folder : {root, root / "cuda", root / "cuda" / "ab"}) CHECK(cleared.contains(folder.native()));
    CHECK_FALSE(cleared.contains(first.native()));  // an entry is checked at every call

    chmod(first, 0777);
    CHECK(other_writable_problem(root, first, {"k.sm_90.cubin"}, &cleared).find(first.string() + " can be written") ==
          0);
    chmod(first, 0755);
    chmod(second, 0777);
    CHECK(other_writable_problem(root, second, {"k.sm_90.cubin"}, &cleared).find(second.string() + " can be written") ==
          0);
    CHECK_FALSE(cleared.contains(second.native()));  // a problem is never remembered as fine
    chmod(second, 0755);
    chmod(second / "k.sm_90.cubin", 0666);
    CHECK(other_writable_problem(root, second, {"k.sm_90.cubin"}, &cleared).find("k.sm_90.cubin can be written") !=
          std::string::npos);
    chmod(second / "k.sm_90.cubin", 0644);

    // A folder above the entries found fine is not asked again by the same reader.
    chmod(root / "cuda" / "ab", 0777);
    CHECK(other_writable_problem(root, second, {"k.sm_90.cubin"}, &cleared).empty());
    CHECK_FALSE(other_writable_problem(root, second, {"k.sm_90.cubin"}).empty());
}

TEST_CASE("an entry may be a file: a key record is checked as one")
{
    test::TempTree tree;
    fs::path root = tree.root() / "cache";
    fs::path record = tree.write("cache/.keys/0123", "record");
    for (const auto& path : {root, root / ".keys"}) chmod(path, 0755);
    ClearedFolders cleared;
    CHECK(other_writable_problem(root, record, {}, &cleared).empty());
    CHECK(cleared.contains((root / ".keys").native()));
    chmod(record, 0666);
    CHECK(other_writable_problem(root, record, {}, &cleared).find(record.string() + " can be written") == 0);
}

TEST_CASE("the folders between an entry and its file are checked: a host entry keeps its module in package folders")
{
    test::TempTree tree;
    fs::path root = tree.root() / "cache";
    fs::path entry = root / "host" / "62" / "6201";
    tree.write("cache/host/62/6201/alpha/k/m.so", "ELF");
    for (const auto& path : {root, root / "host", root / "host" / "62", entry, entry / "alpha", entry / "alpha" / "k"})
        chmod(path, 0755);
    CHECK(other_writable_problem(root, entry, {"alpha/k/m.so"}).empty());
    chmod(entry / "alpha" / "k", 0777);
    CHECK(other_writable_problem(root, entry, {"alpha/k/m.so"})
              .find((entry / "alpha" / "k").string() + " can be written") == 0);
}

TEST_SUITE_END();
