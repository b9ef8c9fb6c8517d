// The pieces of `build --in-place` that decide without compiling: which
// modules a tree adds, and how the extension beside a module stands against
// its key (the record, the stamp, another tool's build).
#include "cache/in_place_record.hpp"
#include "cache/cache.hpp"
#include "host/module_scan.hpp"

#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

TEST_SUITE_BEGIN("in_place");

using namespace ck;
namespace fs = std::filesystem;

namespace {

const std::string ext = ".cpython-311-x86_64-linux-gnu.so";

std::vector<std::string> relative_files(const std::vector<PythonModuleFile>& modules, const fs::path& root)
{
    std::vector<std::string> files;
    for (const auto& module : modules) files.push_back(module.file.lexically_relative(root).string());
    return files;
}

void set_mtime(const fs::path& path, std::int64_t seconds)
{
    const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

InPlaceRecord record_for(const fs::path& folder, const std::string& stem, const std::string& key)
{
    InPlaceRecord record;
    record.module = "pk.m_kernels";
    record.key = key;
    record.extension = stem + ext;
    auto stamp = file_stamp(folder / record.extension);
    REQUIRE(stamp);
    record.size = stamp->size;
    record.mtime_ns = stamp->mtime_ns;
    record.sha256 = sha256_file(folder / record.extension);
    record.files = {record.extension, "__pyccel__/" + stem + ".pyi"};
    return record;
}

}  // namespace

TEST_CASE("a tree adds *<suffix>.py and *<suffix>_*.py modules, not pytest files or build folders")
{
    test::TempTree tree;
    tree.write("src/pk/__init__.py", "");
    tree.write("src/pk/geo/__init__.py", "");
    tree.write("src/pk/geo/utilities_kernels.py", "");
    tree.write("src/pk/geo/evaluation_kernels_1d.py", "");
    tree.write("src/pk/geo/kernels.py", "");  // no prefix: not a host module's name
    tree.write("src/pk/geo/tests/test_x_kernels.py", "");
    tree.write("src/pk/geo/__pyccel__/utilities_kernels.py", "");
    tree.write("src/pk/.hidden/a_kernels.py", "");
    tree.write("src/pk/geo/notes_kernels.txt", "");
    auto modules = find_suffix_modules({tree.root() / "src/pk"}, "_kernels");
    CHECK(relative_files(modules, tree.root() / "src") ==
          std::vector<std::string>{"pk/geo/evaluation_kernels_1d.py", "pk/geo/utilities_kernels.py"});
    CHECK(modules.front().source_root == tree.root() / "src");
    CHECK(find_suffix_modules({tree.root() / "src/pk"}, "_host").empty());
}

TEST_CASE("a module's source root is above its highest package; a loose module is its own root")
{
    test::TempTree tree;
    tree.write("a/pk/__init__.py", "");
    tree.write("a/pk/sub/__init__.py", "");
    auto nested = tree.write("a/pk/sub/m_kernels.py", "");
    auto loose = tree.write("b/loose_kernels.py", "");
    CHECK(python_module_file(nested).source_root == tree.root() / "a");
    CHECK(python_module_file(loose).source_root == tree.root() / "b");
}

TEST_CASE("records round-trip, and anything else at their path counts as none")
{
    test::TempTree tree;
    auto folder = tree.root() / "pk";
    tree.write("pk/m_kernels" + ext, "binary");
    InPlaceRecord record = record_for(folder, "m_kernels", "k1");
    record.inputs = {{"source", {{"file", "m_kernels.py"}}}};
    fs::create_directories(folder / "__pyccel__");
    write_in_place_record(in_place_record_path(folder, "m_kernels"), record);
    auto read = read_in_place_record(in_place_record_path(folder, "m_kernels"));
    REQUIRE(read);
    CHECK(read->key == "k1");
    CHECK(read->files == record.files);
    CHECK(read->inputs == record.inputs);
    CHECK(read->sha256 == record.sha256);

    tree.write("pk/__pyccel__/m_kernels.cunumpy-kernels.json", "{\"format\": \"other/1\", \"key\": \"k1\"}");
    CHECK_FALSE(read_in_place_record(in_place_record_path(folder, "m_kernels")));
    tree.write("pk/__pyccel__/m_kernels.cunumpy-kernels.json", "{not json");
    CHECK_FALSE(read_in_place_record(in_place_record_path(folder, "m_kernels")));
}

TEST_CASE("an extension is current, stale, missing or another tool's")
{
    test::TempTree tree;
    auto folder = tree.root() / "pk";
    auto source = tree.write("pk/m_kernels.py", "def m(): pass\n");
    auto imported = tree.write("pk/dep_kernels.py", "def d(): pass\n");
    const std::vector<fs::path> sources = {source, imported};
    using Kind = InPlaceState::Kind;

    CHECK(read_in_place_state(folder, "m_kernels", ext, "k1", sources).kind == Kind::missing);

    auto extension = tree.write("pk/m_kernels" + ext, "built by pyccel");
    set_mtime(source, 1000);
    set_mtime(imported, 1000);
    set_mtime(extension, 2000);
    auto foreign = read_in_place_state(folder, "m_kernels", ext, "k1", sources);
    CHECK(foreign.kind == Kind::foreign);
    CHECK_FALSE(foreign.older_than_sources);
    set_mtime(imported, 3000);  // make's rule: an imported source newer than the extension
    CHECK(read_in_place_state(folder, "m_kernels", ext, "k1", sources).older_than_sources);

    fs::create_directories(folder / "__pyccel__");
    write_in_place_record(in_place_record_path(folder, "m_kernels"), record_for(folder, "m_kernels", "k1"));
    CHECK(read_in_place_state(folder, "m_kernels", ext, "k1", sources).kind == Kind::current);
    auto stale = read_in_place_state(folder, "m_kernels", ext, "k2", sources);
    CHECK(stale.kind == Kind::stale);
    CHECK(stale.record->key == "k1");

    // A copy that kept the bytes is still ours; other bytes are another tool's.
    set_mtime(extension, 5000);
    CHECK(read_in_place_state(folder, "m_kernels", ext, "k1", sources).kind == Kind::current);
    tree.write("pk/m_kernels" + ext, "rebuilt by pyccel!");
    CHECK(read_in_place_state(folder, "m_kernels", ext, "k1", sources).kind == Kind::foreign);

    // An interrupted install (the record emptied of its key) is stale whatever the extension.
    InPlaceRecord interrupted = record_for(folder, "m_kernels", "");
    write_in_place_record(in_place_record_path(folder, "m_kernels"), interrupted);
    CHECK(read_in_place_state(folder, "m_kernels", ext, "k1", sources).kind == Kind::stale);
}

TEST_SUITE_END();
