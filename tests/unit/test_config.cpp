#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/error.hpp"
#include "scoped_env.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("config");

using namespace ck;

TEST_CASE("no pyproject.toml gives the defaults")
{
    test::TempTree tree;
    Config config = load_config(tree.root());
    CHECK(config.host_suffix == "_kernels");
    CHECK(config.cuda_suffix == "_cuda.cu");
    CHECK(config.architectures == default_architectures);
    CHECK(config.ptx);
    CHECK(config.compiler == CudaCompilerKind::nvrtc);
    CHECK(config.source_file.empty());
}

TEST_CASE("the nearest pyproject.toml's table overrides the defaults")
{
    test::TempTree tree;
    tree.write("pyproject.toml", R"([tool.cunumpy-kernels]
host-suffix = "_pyccel"
arch = ["sm_90"]
ptx = false
compiler = "nvcc"
options = ["-DNDEBUG"]
include-dirs = ["include"]
cache-name = "my-sim"
jobs = 3
check-name-length = false
)");
    tree.write("src/pkg/__init__.py", "");
    tree.write("include/shared.cuh", "");
    Config config = load_config(tree / "src/pkg");
    CHECK(config.host_suffix == "_pyccel");
    CHECK(config.architectures == std::vector<std::string>{"sm_90"});
    CHECK_FALSE(config.ptx);
    CHECK(config.compiler == CudaCompilerKind::nvcc);
    CHECK(config.options == std::vector<std::string>{"-DNDEBUG"});
    REQUIRE(config.include_dirs.size() == 1);
    CHECK(config.include_dirs[0] == tree / "include");
    CHECK(config.cache_name == "my-sim");
    CHECK(config.jobs == 3);
    CHECK_FALSE(config.check_name_length);
    CHECK(config.source_file == tree / "pyproject.toml");
}

TEST_CASE("~ and ~/ in path values name the home folder; other paths are relative to pyproject.toml, normalized")
{
    test::TempTree tree;
    test::ScopedEnv home("HOME", (tree / "home").string());
    tree.write("home/include/shared.cuh", "");
    tree.write("work/include/local.cuh", "");
    tree.write("work/pyproject.toml", R"([tool.cunumpy-kernels]
cache-dir = "~/kc"
python = "~/venv/bin/python"
include-dirs = ["~/include", "./sub/../include/", "~"]
cuda-root = "~user/cuda"
)");
    tree.write("work/sub/.keep", "");
    Config config = load_config(tree / "work/sub/..");
    CHECK(config.cache_dir == tree / "home/kc");
    CHECK(config.python == (tree / "home/venv/bin/python").string());
    CHECK(config.include_dirs ==
          std::vector<std::filesystem::path>{tree / "home/include", tree / "work/include", tree / "home"});
    CHECK(config.cuda_root == tree / "work/~user/cuda");  // ~user is not expanded
}

TEST_CASE("a nearer pyproject.toml without the table stops the search")
{
    test::TempTree tree;
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\nptx = false\n");
    tree.write("inner/pyproject.toml", "[project]\nname = 'inner'\n");
    CHECK(load_config(tree / "inner").ptx);
}

TEST_CASE("an unknown key is an error naming the file, line and key")
{
    test::TempTree tree;
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\n\narchs = [\"sm_90\"]\n");
    try {
        load_config(tree.root());
        FAIL("expected a ConfigError");
    } catch (const ConfigError& error) {
        std::string message = error.what();
        CHECK(message.find((tree / "pyproject.toml").string() + ":3:") != std::string::npos);
        CHECK(message.find("archs") != std::string::npos);
        CHECK(message.find("unknown key") != std::string::npos);
        // The list is the parser's own: the newest keys are in it.
        for (const char* key : {"not-kernels", "struct-headers", "struct-header-timeout", "host-suffix", "umask"})
            CHECK_MESSAGE(message.find(key) != std::string::npos, key);
    }
}

TEST_CASE("template-args maps kernels to their template arguments; a bad value names the file, line and kernel")
{
    test::TempTree tree;
    tree.write("pyproject.toml",
               "[tool.cunumpy-kernels]\n"
               "template-args = { scale = [\"double\", \"3\"], \"sim.kernels.push\" = [\"Pair<int, 2>\"] }\n");
    Config config = load_config(tree.root());
    CHECK(config.template_args.at("scale") == std::vector<std::string>{"double", "3"});
    CHECK(config.template_args.at("sim.kernels.push") == std::vector<std::string>{"Pair<int, 2>"});
    auto error_of = [&](const std::string& table) -> std::string {
        tree.write("pyproject.toml", "[tool.cunumpy-kernels]\n\n" + table + "\n");
        try {
            load_config(tree.root());
        } catch (const ConfigError& error) {
            return error.what();
        }
        return "";
    };
    std::string file = (tree / "pyproject.toml").string();
    CHECK(error_of("template-args = [\"double\"]")
              .find(file + ":3: [tool.cunumpy-kernels] template-args: expected a table") == 0);
    CHECK(error_of("template-args = { scale = [] }").find("scale: expected at least one template argument") !=
          std::string::npos);
    CHECK(error_of("template-args = { scale = \"double\" }").find("expected an array of strings") != std::string::npos);
    CHECK(error_of("template-args = { scale = [\"double, int\"] }")
              .find("scale: 'double, int' is not a C++ template argument") != std::string::npos);
    CHECK(error_of("template-args = { scale = [\"x; int y\"] }").find("is not a C++ template argument") !=
          std::string::npos);
    CHECK(error_of("template-args = { scale = [\"Pair<int\"] }").find("is not a C++ template argument") !=
          std::string::npos);
}

TEST_CASE("struct-headers maps header paths, made absolute, to module:function writers; a bad value names the header")
{
    test::TempTree tree;
    tree.write("pyproject.toml",
               "[tool.cunumpy-kernels.struct-headers]\n"
               "\"pkg/args.cuh\" = \"pkg.cuda_arguments:write_args_header\"\n"
               "\"pkg/more.cuh\" = \"pkg.sub.mod:Writers.write\"\n");
    Config config = load_config(tree.root());
    CHECK(config.struct_headers.size() == 2);
    CHECK(config.struct_headers.at(tree / "pkg/args.cuh") == "pkg.cuda_arguments:write_args_header");
    CHECK(config.struct_headers.at(tree / "pkg/more.cuh") == "pkg.sub.mod:Writers.write");
    auto error_of = [&](const std::string& line) -> std::string {
        tree.write("pyproject.toml", "[tool.cunumpy-kernels]\n" + line + "\n");
        try {
            load_config(tree.root());
        } catch (const ConfigError& error) {
            return error.what();
        }
        return "";
    };
    CHECK(error_of("struct-headers = [\"a.cuh\"]").find("struct-headers: expected a table of header paths") !=
          std::string::npos);
    CHECK(error_of("struct-headers = { \"a.cuh\" = 3 }").find("expected a string") != std::string::npos);
    for (const char* writer : {"write_header", "pkg.mod:", ":write", "pkg mod:write", "pkg.mod:write()"})
        CHECK(error_of(std::string("struct-headers = { \"a.cuh\" = \"") + writer + "\" }")
                  .find(std::string("a.cuh: '") + writer + "' is not \"module:callable\"") != std::string::npos);
}

TEST_CASE("struct-header-timeout is a whole number of seconds from 1 to 86400, default 60")
{
    test::TempTree tree;
    CHECK(load_config(tree.root()).struct_header_timeout == 60);
    for (const char* good : {"1", "5", "86400"}) {
        tree.write("pyproject.toml", std::string("[tool.cunumpy-kernels]\nstruct-header-timeout = ") + good + "\n");
        CHECK(load_config(tree.root()).struct_header_timeout == std::stoi(good));
    }
    for (const char* bad : {"0", "-3", "86401", "1.5", "\"60\"", "true"}) {
        tree.write("pyproject.toml", std::string("[tool.cunumpy-kernels]\nstruct-header-timeout = ") + bad + "\n");
        std::string message;
        try {
            load_config(tree.root());
        } catch (const ConfigError& error) {
            message = error.what();
        }
        CHECK_MESSAGE(
            message.find("struct-header-timeout: expected a number of seconds from 1 to 86400") != std::string::npos,
            bad, ": ", message);
    }
}

TEST_CASE("umask is three octal digits; in-place and in-place-modules are read")
{
    test::TempTree tree;
    tree.write("pkg/extra_module.py", "");
    tree.write(
        "pyproject.toml",
        "[tool.cunumpy-kernels]\numask = \"002\"\nin-place = true\nin-place-modules = [\"pkg/extra_module.py\"]\n");
    Config config = load_config(tree.root());
    CHECK(config.umask == 02u);
    CHECK(config.in_place);
    CHECK(config.in_place_modules == std::vector<std::filesystem::path>{tree / "pkg/extra_module.py"});
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\numask = \"rw-r--r--\"\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("umask: expected three octal digits"),
                         ConfigError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\numask = \"000\"\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("lets every user write"), ConfigError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\nin-place-modules = [\"pkg/missing.py\"]\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("is not a Python file"), ConfigError);
}

TEST_CASE("a wrong type is an error naming the key")
{
    test::TempTree tree;
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\nptx = \"yes\"\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("ptx: expected true or false"), ConfigError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\narch = \"sm_90\"\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("arch: expected an array"), ConfigError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\njobs = 0\n");
    CHECK_THROWS_AS(load_config(tree.root()), ConfigError);
}

TEST_CASE("bad values and bad TOML are errors")
{
    test::TempTree tree;
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\narch = [\"hopper\"]\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("not a CUDA architecture"), UsageError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\ncompiler = \"clang\"\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("unknown compiler 'clang'"), UsageError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels\nptx = true\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("invalid TOML"), ConfigError);
    // A key given twice is named as written, at its second line.
    tree.write("pyproject.toml",
               "[tool.cunumpy-kernels.struct-headers]\n\"src/a.cuh\" = \"m:w\"\n  \"src/a.cuh\" = \"m:v\"\n");
    try {
        load_config(tree.root());
        FAIL("a key given twice was accepted");
    } catch (const ConfigError& error) {
        std::string message = error.what();
        CHECK(message.find("pyproject.toml:3:") != std::string::npos);
        CHECK(message.find("invalid TOML: '\"src/a.cuh\" = \"m:v\"' defines again") != std::string::npos);
        CHECK(message.find("srsrc") == std::string::npos);
    }
}

TEST_CASE("architecture names")
{
    CHECK_NOTHROW(validate_architecture("sm_90", "--arch"));
    CHECK_NOTHROW(validate_architecture("sm_90a", "--arch"));
    CHECK_NOTHROW(validate_architecture("compute_80", "--arch"));
    CHECK_THROWS_AS(validate_architecture("sm90", "--arch"), UsageError);
    CHECK_THROWS_AS(validate_architecture("", "--arch"), UsageError);
}

TEST_CASE("paths must exist, cache names must be plain, the table must be a table")
{
    test::TempTree tree;
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\ninclude-dirs = [\"missing\"]\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()),
                         doctest::Contains(":2: [tool.cunumpy-kernels] include-dirs: 'missing' is not a folder"),
                         ConfigError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\ncunumpy-include-dir = \"nope\"\n");
    CHECK_THROWS_AS(load_config(tree.root()), ConfigError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\ncache-name = \"../../evil\"\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("must be a plain name"), ConfigError);
    tree.write("pyproject.toml", "[tool]\ncunumpy-kernels = 3\n");
    CHECK_THROWS_WITH_AS(load_config(tree.root()), doctest::Contains("must be a table"), ConfigError);
}

TEST_CASE("value errors name the line of the key")
{
    test::TempTree tree;
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\n\narch = [\"sm_90\", \"ampere\"]\n");
    CHECK_THROWS_WITH_AS(
        load_config(tree.root()),
        doctest::Contains("pyproject.toml:3: [tool.cunumpy-kernels] arch: 'ampere' is not a CUDA architecture"),
        ConfigError);
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\ncompiler = \"clang\"\n");
    CHECK_THROWS_WITH_AS(
        load_config(tree.root()),
        doctest::Contains("pyproject.toml:2: [tool.cunumpy-kernels] compiler: unknown compiler 'clang'"), ConfigError);
}

TEST_CASE(
    "not-kernels lists folders resolved against pyproject.toml's folder, lexically normal; not a list is an error")
{
    test::TempTree tree;
    tree.write("src/pkg/geometry/geometry_kernels.py", "");
    tree.write("src/pkg/orbits/orbits_kernels.py", "");
    tree.write("pyproject.toml",
               "[tool.cunumpy-kernels]\nnot-kernels = [\"src/pkg/geometry/\", \"src/pkg/./orbits\"]\n");
    Config config = load_config(tree.root());
    CHECK(config.not_kernels == std::vector<std::filesystem::path>{tree / "src/pkg/geometry", tree / "src/pkg/orbits"});
    tree.write("pyproject.toml", "[tool.cunumpy-kernels]\nnot-kernels = \"src/pkg/geometry\"\n");
    CHECK_THROWS_AS(load_config(tree.root()), ConfigError);
}

TEST_CASE("not-kernels naming no folder (renamed, removed, or a file) is an error naming the line and the path")
{
    test::TempTree tree;
    tree.write("src/pkg/geometry/geometry_kernels.py", "");
    for (const char* listed : {"src/pkg/geometri", "src/pkg/geometry/geometry_kernels.py"}) {
        tree.write("pyproject.toml",
                   std::string("[tool.cunumpy-kernels]\n\nnot-kernels = [\"src/pkg/geometry\", \"") + listed + "\"]\n");
        try {
            load_config(tree.root());
            FAIL("expected a ConfigError");
        } catch (const ConfigError& error) {
            std::string message = error.what();
            CHECK(message.find((tree / "pyproject.toml").string() + ":3:") != std::string::npos);
            CHECK(message.find(std::string("'") + listed + "' is not a folder") != std::string::npos);
        }
    }
}

TEST_SUITE_END();
