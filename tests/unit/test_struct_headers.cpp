#include "struct_headers/header_check.hpp"
#include "struct_headers/struct_layouts.hpp"
#include "util/subprocess.hpp"
#include "util/text.hpp"
#include "cunumpy_kernels/error.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <chrono>

TEST_SUITE_BEGIN("struct_headers");

using namespace ck;

TEST_CASE("shell_word leaves plain words alone and single-quotes every other, quotes included")
{
    CHECK(util::shell_word("/usr/bin/python3") == "/usr/bin/python3");
    CHECK(util::shell_word("pkg.mod:write") == "pkg.mod:write");
    CHECK(util::shell_word("") == "''");
    CHECK(util::shell_word("my project") == "'my project'");
    CHECK(util::shell_word("$HOME") == "'$HOME'");
    CHECK(util::shell_word("it's") == "'it'\\''s'");
    CHECK(util::shell_word("a\"b`c`;d&e\\f") == "'a\"b`c`;d&e\\f'");
    CHECK(util::shell_word("from m import f; f(\"x\")") == "'from m import f; f(\"x\")'");
}

TEST_CASE("a writer runs in the folder that holds its top-level package, wherever the header is")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.write("src/sim/args.py", "");
    tree.write("flat/__init__.py", "");
    tree.write("tools.py", "");
    // The header in the package: the folder above its top-level package.
    CHECK(writer_source_root(tree / "src/sim/args.cuh", "sim.args:write", tree.root()) == tree / "src");
    // Outside any package (include/, the root, a plain folder): the folder where the module is.
    CHECK(writer_source_root(tree / "include/args.cuh", "sim.args:write", tree.root()) == tree / "src");
    CHECK(writer_source_root(tree / "args.cuh", "sim.args:write", tree.root()) == tree / "src");
    CHECK(writer_source_root(tree / "src/cuda/args.cuh", "sim.args:write", tree.root()) == tree / "src");
    // A flat layout and a top-level module are found at the root.
    CHECK(writer_source_root(tree / "include/args.cuh", "flat:write", tree.root()) == tree.root());
    CHECK(writer_source_root(tree / "include/args.cuh", "tools:write", tree.root()) == tree.root());
    // An installed module: the root, and the interpreter's own path finds it.
    CHECK(writer_source_root(tree / "include/args.cuh", "struphy.utils:write", tree.root()) == tree.root());
}

TEST_CASE("the regenerate command changes to the source root and calls the writer with the relative header")
{
    CHECK(regenerate_command("/venv/bin/python", "/p/src", "/p/src/sim/args.cuh", "sim.args:write") ==
          "cd /p/src && /venv/bin/python -c 'from sim.args import write; write(\"sim/args.cuh\")'");
    CHECK(regenerate_command("python3", "/p/src", "/p/include/args.cuh", "sim.args:Writers.args") ==
          "cd /p/src && python3 -c 'from sim.args import Writers; Writers.args(\"../include/args.cuh\")'");
    CHECK(regenerate_command("/my venv/python", "/it's here/src", "/it's here/src/a.cuh", "m:w") ==
          "cd '/it'\\''s here/src' && '/my venv/python' -c 'from m import w; w(\"a.cuh\")'");
}

TEST_CASE("a struct that two configured headers define is named with both headers, whatever the layouts")
{
    test::TempTree tree;
    Config config;
    config.struct_headers[tree.write("a.cuh", "struct Params { double a; };\nstruct Only { int n; };\n")] = "m:a";
    config.struct_headers[tree.write("b.cuh", "struct Params { double a; double b; };\n")] = "m:b";
    config.struct_headers[tree.write("c.cuh", "struct Params { double a; };\nstruct Other { int n; };\n")] = "m:c";
    ConfiguredStructs structs = read_configured_structs(config);
    REQUIRE(structs.duplicates.size() == 2);
    CHECK(structs.duplicates[0].name == "Params");
    CHECK(structs.duplicates[0].first == tree / "a.cuh");
    CHECK(structs.duplicates[0].second == tree / "b.cuh");
    CHECK(structs.duplicates[1].second == tree / "c.cuh");
    CHECK(structs.duplicates[0].message().find("struct Params is defined by both " + (tree / "a.cuh").string() +
                                               " and " + (tree / "b.cuh").string()) == 0);
    CHECK(structs.layouts.count("Only") == 1);
    CHECK(structs.layouts.count("Other") == 1);
    CHECK(structs.layouts.at("Params").size == 8);  // the first definition
    CHECK_THROWS_AS(configured_struct_layouts(config), SourceError);
    config.struct_headers.erase(tree / "b.cuh");
    config.struct_headers.erase(tree / "c.cuh");
    CHECK(configured_struct_layouts(config).size() == 2);
}

TEST_CASE("a writer's time limit stops its whole process group, whatever it does with signals and children")
{
    using Clock = std::chrono::steady_clock;
    auto seconds_since = [](Clock::time_point start) {
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    for (const char* script : {"sleep 100 & sleep 100", "trap '' ALRM TERM INT; sleep 100", "sh -c 'sleep 100'"}) {
        CAPTURE(script);
        auto start = Clock::now();
        util::ProcessResult result = util::run_process_within({"sh", "-c", script}, {}, 1);
        CHECK(result.timed_out);
        CHECK(seconds_since(start) < 5);
    }
    // A child that ends leaving a grandchild that holds the output: done at once, the grandchild stopped.
    auto start = Clock::now();
    util::ProcessResult left = util::run_process_within({"sh", "-c", "sleep 100 & echo done"}, {}, 30);
    CHECK_FALSE(left.timed_out);
    CHECK(left.exit_code == 0);
    CHECK(left.output == "done\n");
    CHECK(seconds_since(start) < 5);
    // One that finishes in time is unaffected, its status and output kept.
    util::ProcessResult quick = util::run_process_within({"sh", "-c", "echo out; echo err >&2; exit 3"}, {}, 30);
    CHECK_FALSE(quick.timed_out);
    CHECK(quick.exit_code == 3);
    CHECK(quick.output == "out\nerr\n");
}

TEST_SUITE_END();
