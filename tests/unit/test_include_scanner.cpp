// Include resolution follows the compiler's search and records what it did not find.
#include "source/include_scanner.hpp"
#include "cunumpy_kernels/error.hpp"
#include "temp_tree.hpp"
#include "util/sha256.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace ck;
namespace fs = std::filesystem;

namespace {

struct ScanFixture {
    test::TempTree tree;
    fs::path kernel = tree / "src/sim/kernels/push";
    IncludeSearch search;

    ScanFixture()
    {
        tree.write("src/sim/kernels/push/push_cuda.cu", "");
        tree.write("cuda/include/cuda/std/cstdint", "// toolkit\n");
        tree.write("cuda/include/cccl/cub/cub.cuh", "// cccl\n");
        search.dirs = {{kernel, "<kernel>"}, {tree / "src", ""}, {tree / "inc", "<I:0>"}};
        search.toolkit_dirs = {tree / "cuda/include", tree / "cuda/include/cccl"};
    }

    IncludeScan scan(const std::string& source, const std::vector<std::string>& pre_includes = {})
    {
        IncludeScanner scanner([] { return std::nullopt; });
        return scanner.scan(kernel / "push_cuda.cu", source, search, pre_includes);
    }
};

std::vector<std::string> names(const IncludeScan& scan)
{
    std::vector<std::string> out;
    for (const auto& header : scan.headers) out.push_back(header.name);
    return out;
}

bool has(const std::vector<std::string>& list, const std::string& name)
{
    return std::find(list.begin(), list.end(), name) != list.end();
}

bool has_path(const std::vector<fs::path>& list, const fs::path& path)
{
    return std::find(list.begin(), list.end(), path) != list.end();
}

}  // namespace

TEST_SUITE("include_scanner")
{
    TEST_CASE("#include_next goes on after the folder that held the including file, as GCC does")
    {
        ScanFixture f;
        f.search.dirs.push_back({f.tree / "inc2", "<I:1>"});
        f.tree.write("inc/wrap.cuh", "#pragma once\n#include_next <wrap.cuh>\n#define WRAPPED 1\n");
        f.tree.write("inc2/wrap.cuh", "#define BASE 1\n");
        IncludeScan scan = f.scan("#include <wrap.cuh>\n");
        CHECK(names(scan) == std::vector<std::string>{"<I:0>/wrap.cuh", "<I:1>/wrap.cuh"});
        // A wrapper that appears in a folder between the two would be read: its name is a key input.
        f.tree.write("inc/deeper/x.cuh", "#include_next <x.cuh>\n");
        f.search.dirs.insert(f.search.dirs.begin() + 2, {f.tree / "inc/deeper", "<I:d>"});
        f.tree.write("inc2/x.cuh", "// base\n");
        scan = f.scan("#include <x.cuh>\n");
        CHECK(names(scan) == std::vector<std::string>{"<I:1>/x.cuh", "<I:d>/x.cuh"});
        CHECK(has(scan.absent, "<I:0>/x.cuh"));
        // Where the search found the file counts, not a folder that merely contains it.
        f.search.dirs = {{f.kernel, "<kernel>"},
                         {f.tree / "src", ""},
                         {f.tree / "inc", "<I:0>"},
                         {f.tree / "inc/deeper", "<I:d>"},
                         {f.tree / "inc2", "<I:1>"}};
        f.tree.write("inc/deeper/z.cuh", "#include_next <z.cuh>\n");
        f.tree.write("inc2/z.cuh", "// base\n");
        scan = f.scan("#include <z.cuh>\n");
        CHECK(names(scan) ==
              std::vector<std::string>{"<I:0>/deeper/z.cuh", "<I:1>/z.cuh"});  // named by the first folder holding it
        // An #include_next of a name found nowhere after it is a system header, as for <...>.
        f.tree.write("inc2/last.cuh", "#include_next <last.cuh>\n");
        scan = f.scan("#include <last.cuh>\n");
        CHECK(names(scan) == std::vector<std::string>{"<I:1>/last.cuh"});
    }

    TEST_CASE("a quoted include found through an -I folder is a key input, named by the folder's label")
    {
        ScanFixture f;
        f.tree.write("inc/tune.cuh", "#define SCALE 2.0\n");
        IncludeScan scan = f.scan("#include \"tune.cuh\"\n");
        CHECK(names(scan) == std::vector<std::string>{"<I:0>/tune.cuh"});
        CHECK(scan.absent == std::vector<std::string>{"<kernel>/tune.cuh", "tune.cuh"});
    }

    TEST_CASE("a header appearing in an earlier folder changes the scan")
    {
        ScanFixture f;
        f.tree.write("inc/tune.cuh", "#define SCALE 2.0\n");
        IncludeScan before = f.scan("#include \"tune.cuh\"\n");
        f.tree.write("src/tune.cuh", "#define SCALE 2.0\n");
        IncludeScan after = f.scan("#include \"tune.cuh\"\n");
        CHECK(names(after) == std::vector<std::string>{"tune.cuh"});
        CHECK(after.absent == std::vector<std::string>{"<kernel>/tune.cuh"});
        CHECK(before.absent != after.absent);
    }

    TEST_CASE("a quoted include found nowhere fails with file:line and every folder searched")
    {
        ScanFixture f;
        try {
            f.scan("// first\n#include \"nowhere.cuh\"\n");
            FAIL("no error");
        } catch (const SourceError& error) {
            std::string message = error.what();
            CHECK(message.find("push_cuda.cu:2: error: #include \"nowhere.cuh\" not found") != std::string::npos);
            CHECK(message.find((f.tree / "inc").string()) != std::string::npos);
            CHECK(message.find((f.tree / "cuda/include/cccl").string()) != std::string::npos);
        }
    }

    TEST_CASE("__has_include guards an optional include; its lookups are still recorded")
    {
        ScanFixture f;
        IncludeScan scan = f.scan(
            "#if defined(__has_include)\n#if __has_include(\"opt.cuh\")\n#include \"opt.cuh\"\n"
            "#endif\n#endif\n");
        CHECK(scan.headers.empty());
        CHECK(has(scan.absent, "<I:0>/opt.cuh"));
        CHECK_THROWS_AS(f.scan("#if __has_include(\"other.cuh\")\n#endif\n#include \"opt.cuh\"\n"), SourceError);
    }

    TEST_CASE("toolkit headers end the search and are keyed by content, not followed; system headers are not keyed")
    {
        ScanFixture f;
        f.tree.write("cuda/include/cccl/cub/cub.cuh", "#include <cub/detail.cuh>\n#include \"nowhere.cuh\"\n");
        IncludeScan scan = f.scan("#include <cuda/std/cstdint>\n#include <cub/cub.cuh>\n#include <cstdio>\n");
        CHECK(names(scan) == std::vector<std::string>{"<cuda>/cub/cub.cuh", "<cuda>/cuda/std/cstdint"});
        CHECK(scan.headers[1].sha256 == sha256_hex("// toolkit\n"));
        CHECK(scan.headers[0].path == f.tree / "cuda/include/cccl/cub/cub.cuh");
        CHECK(has(scan.absent, "<kernel>/cuda/std/cstdint"));
        CHECK(has(scan.absent, "<I:0>/cstdio"));
    }

    TEST_CASE("-isystem folders come after the toolkit's include folder, before cccl")
    {
        ScanFixture f;
        f.search.system_dirs = {{f.tree / "sys", "<isystem:0>"}};
        f.tree.write("sys/cuda/std/cstdint", "// shadowed by the toolkit\n");
        f.tree.write("sys/cub/cub.cuh", "// shadows cccl\n");
        f.tree.write("sys/mine.cuh", "// found\n");
        IncludeScan scan = f.scan("#include <cuda/std/cstdint>\n#include <cub/cub.cuh>\n#include <mine.cuh>\n");
        CHECK(names(scan) ==
              std::vector<std::string>{"<cuda>/cuda/std/cstdint", "<isystem:0>/cub/cub.cuh", "<isystem:0>/mine.cuh"});
    }

    TEST_CASE("forced includes are scanned first, as quoted includes of the source")
    {
        ScanFixture f;
        f.tree.write("inc/force.cuh", "#include \"detail.cuh\"\n");
        f.tree.write("inc/detail.cuh", "\n");
        IncludeScan scan = f.scan("", {"force.cuh", "cuda/std/cstdint"});
        CHECK(scan.pre_includes == std::vector<std::string>{"<I:0>/force.cuh", "<cuda>/cuda/std/cstdint"});
        CHECK(scan.pre_include_files == std::vector<fs::path>{f.tree / "inc/force.cuh", "cuda/std/cstdint"});
        CHECK(names(scan) ==
              std::vector<std::string>{"<I:0>/detail.cuh", "<I:0>/force.cuh", "<cuda>/cuda/std/cstdint"});
        CHECK_THROWS_WITH_AS(f.scan("", {"missing.cuh"}), doctest::Contains("forced include \"missing.cuh\" not found"),
                             SourceError);
    }

    TEST_CASE("a computed include is followed through the object-like macros of the files scanned")
    {
        ScanFixture f;
        f.tree.write("src/sim/kernels/push/mh.cuh", "// mh\n");
        f.tree.write("inc/angle.cuh", "// angle\n");
        f.tree.write("src/sim/names.cuh", "#define FROM_HEADER \"mh.cuh\"\n");
        f.tree.write("inc/both_a.cuh", "// a\n");
        f.tree.write("inc/both_b.cuh", "// b\n");
        struct Spelling {
            const char* what;
            std::string source;
            std::vector<std::string> headers;
        };
        std::vector<Spelling> spellings = {
            {"a string", "#define H \"mh.cuh\"\n#include H\n", {"<kernel>/mh.cuh"}},
            {"a header name", "#define H <angle.cuh>\n#include H\n", {"<I:0>/angle.cuh"}},
            {"a chain of names", "#define H1 \"mh.cuh\"\n#define H2 H1\n#include H2\n", {"<kernel>/mh.cuh"}},
            {"a macro of a header",
             "#include \"sim/names.cuh\"\n#include FROM_HEADER\n",
             {"<kernel>/mh.cuh", "sim/names.cuh"}},
            {"one per branch",
             "#ifdef A\n#define H <both_a.cuh>\n#else\n#define H <both_b.cuh>\n#endif\n#include H\n",
             {"<I:0>/both_a.cuh", "<I:0>/both_b.cuh"}},
            {"include_next", "#define H <angle.cuh>\n#include_next H\n", {"<I:0>/angle.cuh"}},
        };
        for (const auto& s : spellings) {
            CAPTURE(s.what);
            IncludeScan scan = f.scan(s.source);
            CHECK(names(scan) == s.headers);
            REQUIRE(scan.computed.size() == 1);
            CHECK(scan.computed[0].find(" -> ") != std::string::npos);
        }
    }

    TEST_CASE("a computed include the scan cannot resolve fails it, naming the file and the line")
    {
        ScanFixture f;
        struct Refusal {
            const char* what;
            std::string source;
            std::string reason;
        };
        std::vector<Refusal> refusals = {
            {"a macro from the command line", "\n#include NOWHERE\n", "NOWHERE is defined as a header name"},
            {"a function-like macro", "#define MAKE(x) #x\n#include MAKE(mh.cuh)\n", "'MAKE(mh.cuh)' is no macro name"},
            {"a macro of other text", "#define H 1 + 2\n\n#include H\n", "H is defined as a header name"},
            {"a cycle", "#define A B\n#define B A\n#include A\n", "A expands to no header name"},
        };
        for (const auto& r : refusals) {
            CAPTURE(r.what);
            try {
                f.scan(r.source);
                FAIL("accepted");
            } catch (const SourceError& e) {
                std::string message = e.what();
                CHECK(message.find("push_cuda.cu:") != std::string::npos);
                CHECK(message.find(r.reason) != std::string::npos);
                CHECK(message.find("write the header's name in quotes") != std::string::npos);
            }
        }
        CHECK_THROWS_WITH_AS(f.scan("\n#include NOWHERE\n"),
                             doctest::Contains("push_cuda.cu:2: error: #include NOWHERE"), SourceError);
        f.tree.write("src/sim/kernels/push/bad.cuh", "\n\n#include ALSO_NOWHERE\n");
        CHECK_THROWS_WITH_AS(f.scan("#include \"bad.cuh\"\n"),
                             doctest::Contains("bad.cuh:3: error: #include ALSO_NOWHERE"), SourceError);
    }

    TEST_CASE("a directive in any standard spelling: digraph, comments and splices between # and its name")
    {
        for (const char* source : {"%:include \"a.cuh\"\n", "%: include \"a.cuh\"\n", "#/**/include \"a.cuh\"\n",
                                   "# /* one\n two */ include \"a.cuh\"\n", "#\\\ninclude \"a.cuh\"\n",
                                   "/* before */ # include \"a.cuh\"\n", "?\?=include \"a.cuh\"\n"}) {
            CAPTURE(source);
            auto includes = list_includes(source).includes;
            REQUIRE(includes.size() == 1);
            CHECK(includes[0].name == "a.cuh");
            CHECK(includes[0].line == 1);
        }
        CHECK(list_includes("%:define H \"m.cuh\"\n%:include H\n").computed ==
              std::vector<std::pair<int, std::string>>{{2, "H"}});
        CHECK(list_includes("#// a null directive\ninclude \"a.cuh\"\n").includes.empty());
        CHECK(list_includes("x %:include \"a.cuh\"\n").includes.empty());
    }

    TEST_CASE("a parent step from a header reached through a symlinked folder is taken from the real folder")
    {
        ScanFixture f;
        f.tree.write("real/sub/a.cuh", "#include \"../b.cuh\"\n");
        f.tree.write("real/b.cuh", "// the file the compiler reads\n");
        f.tree.write("inc/b.cuh", "// the lexical answer\n");
        f.tree.write("inc/plain/c.cuh", "#include \"../b.cuh\"\n");
        fs::create_directory_symlink(f.tree / "real/sub", f.tree / "inc/sub");
        auto scan = f.scan("#include \"sub/a.cuh\"\n");
        std::vector<fs::path> paths;
        for (const auto& header : scan.headers) paths.push_back(fs::weakly_canonical(header.path));
        CHECK(has_path(paths, fs::weakly_canonical(f.tree / "real/b.cuh")));
        CHECK(!has_path(paths, fs::weakly_canonical(f.tree / "inc/b.cuh")));
        // Without a symlinked folder the lexical name is kept, and with it the folder's label.
        CHECK(has(names(f.scan("#include \"plain/c.cuh\"\n")), "<I:0>/b.cuh"));
    }

    TEST_CASE("the scanner's advice: every branch is followed, and a computed include's way out is valid C")
    {
        ScanFixture f;
        CHECK_THROWS_WITH_AS(f.scan("#if 0\n#include \"gone.cuh\"\n#endif\n"),
                             doctest::Contains("follows every #if branch"), SourceError);
        CHECK_THROWS_WITH_AS(f.scan("#if 0\n#include \"gone.cuh\"\n#endif\n"),
                             doctest::Contains("#if __has_include(\"gone.cuh\")"), SourceError);
        CHECK_THROWS_WITH_AS(f.scan("#define Q(x) #x\n#include Q(a.cuh)\n"),
                             doctest::Contains("#define HEADER \"name.cuh\" in this file"), SourceError);
        CHECK_THROWS_WITH_AS(f.scan("#include NAMED\n"), doctest::Contains("#define NAMED \"name.cuh\""), SourceError);
    }

    TEST_CASE("directives are read as the compiler reads them")
    {
        auto includes = list_includes(
                            "#  include \\\n  \"spliced.cuh\"\n#include <a/b-c.h>\n"
                            "const char* s = R\"(\n#include \"in_raw_string.cuh\"\n)\";\n"
                            "#include MACRO(x)\n")
                            .includes;
        REQUIRE(includes.size() == 2);
        CHECK(includes[0].name == "spliced.cuh");
        CHECK(includes[0].line == 1);
        CHECK(includes[1].name == "a/b-c.h");
        CHECK(list_includes("#include MACRO(x)\n").computed ==
              std::vector<std::pair<int, std::string>>{{1, "MACRO(x)"}});
    }
}
