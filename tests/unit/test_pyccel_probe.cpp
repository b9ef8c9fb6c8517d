// The version probe: Pyccel's version and command line, and the Python
// interpreter's facts, learnt once and remembered until its packages change.
#include "host/pyccel_compiler.hpp"
#include "host/python_environment.hpp"
#include "compilers/python_probe.hpp"
#include "compilers/tool_probe.hpp"
#include "cunumpy_kernels/error.hpp"

#include "scoped_env.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <thread>

TEST_SUITE_BEGIN("pyccel_probe");

using namespace ck;
namespace fs = std::filesystem;

namespace {

const char* facts_json(const std::string& site)
{
    static std::string text;
    text =
        "{\"executable\": \"/venv/bin/python\", \"version\": \"3.11.7 (main)\", \"platform\": \"Linux-6.1-x86_64\","
        " \"ext_suffix\": \".cpython-311-x86_64-linux-gnu.so\", \"pyccel\": \"2.2.3\", \"numpy\": \"2.2.6\","
        " \"path\": [\"" +
        site + "\"]}";
    return text.c_str();
}

// A stand-in interpreter: prints the facts and counts its runs.
std::filesystem::path fake_python(const test::TempTree& tree, const std::string& site)
{
    auto path = tree.write("bin/python", std::string("#!/bin/sh\necho run >> ") + (tree / "runs").string() +
                                             "\ncat <<'EOF'\n" + facts_json(site) + "\nEOF\n");
    ::chmod(path.c_str(), 0755);
    return path;
}

int runs(const test::TempTree& tree)
{
    std::ifstream in(tree / "runs");
    int count = 0;
    for (std::string line; std::getline(in, line);) ++count;
    return count;
}

}  // namespace

TEST_CASE("Pyccel versions from importlib.metadata and from `pyccel --version`")
{
    auto plain = PyccelVersion::parse("2.2.3");
    REQUIRE(plain);
    CHECK(plain->to_string() == "2.2.3");
    auto banner = PyccelVersion::parse("pyccel 2.1.0 from /venv/lib/python3.11/site-packages/pyccel (python 3.11)");
    REQUIRE(banner);
    CHECK(banner->to_string() == "2.1.0");
    auto candidate = PyccelVersion::parse("2.3.0rc1");
    REQUIRE(candidate);
    CHECK(candidate->minor == 3);
    CHECK(PyccelVersion::parse("1.12")->to_string() == "1.12.0");
    CHECK_FALSE(PyccelVersion::parse(""));
    CHECK_FALSE(PyccelVersion::parse("pyccel: command not found"));
}

TEST_CASE("which Pyccel versions are driven, and how")
{
    CHECK(PyccelVersion::parse("2.1.0")->has_compile_command());
    CHECK_FALSE(PyccelVersion::parse("2.0.1")->has_compile_command());
    CHECK_FALSE(PyccelVersion::parse("1.12.1")->has_compile_command());
    CHECK(unsupported_pyccel_reason(*PyccelVersion::parse("1.12.1")).find("2.0 or later") != std::string::npos);
    CHECK(unsupported_pyccel_reason(*PyccelVersion::parse("2.0.0")).empty());
    CHECK(is_checked_pyccel(*PyccelVersion::parse("2.2.3")));
    CHECK_FALSE(is_checked_pyccel(*PyccelVersion::parse("2.1.0")));

    PyccelCompileRequest request{"/w/src/pk/m.py", "/e/pk", "/w", "c", true, "/w/src"};
    auto modern = PyccelCompiler("/venv/bin/pyccel", *PyccelVersion::parse("2.2.3")).command_line(request);
    CHECK(modern == std::vector<std::string>{"/venv/bin/pyccel", "compile", "/w/src/pk/m.py", "--language", "c",
                                             "--output", "/e/pk", "--openmp", "--no-debug", "--compiler-family",
                                             "GNU"});
    request.openmp = false;
    request.language = "fortran";
    auto older = PyccelCompiler("pyccel", *PyccelVersion::parse("2.0.1")).command_line(request);
    CHECK(older == std::vector<std::string>{"pyccel", "/w/src/pk/m.py", "--language", "fortran", "--output", "/e/pk",
                                            "--compiler-family", "GNU"});
    PyccelSettings debug;
    debug.debug = true;
    debug.compiler_family = "intel";
    auto explicit_settings = PyccelCompiler("pyccel", *PyccelVersion::parse("2.2.3"), debug).command_line(request);
    CHECK(std::vector<std::string>(explicit_settings.end() - 3, explicit_settings.end()) ==
          std::vector<std::string>{"--debug", "--compiler-family", "intel"});
    CHECK(debug.key_inputs() == nlohmann::json{{"mode", "debug"}, {"compiler_family", "intel"}});
    CHECK(PyccelSettings{}.key_inputs().empty());
}

TEST_CASE("the probe's answer is parsed narrowly")
{
    auto facts = parse_python_facts(facts_json("/venv/lib/site-packages"), "python");
    CHECK(facts.pyccel == "2.2.3");
    CHECK(facts.ext_suffix == ".cpython-311-x86_64-linux-gnu.so");
    CHECK(facts.path == std::vector<std::string>{"/venv/lib/site-packages"});
    CHECK(parse_python_facts(to_json_text(facts), "again").platform == facts.platform);
    CHECK_THROWS_AS(parse_python_facts("Traceback (most recent call last):", "python"), ToolchainError);
    CHECK_THROWS_AS(parse_python_facts("{\"executable\": 3}", "python"), ToolchainError);
}

TEST_CASE("the interpreter is asked once, and again only when its packages change")
{
    test::TempTree tree;
    std::filesystem::create_directories(tree / "site-packages");
    auto python = fake_python(tree, (tree / "site-packages").string());
    ToolProbe probe(tree / "probes");
    std::string why;
    auto first = find_python_facts(python.string(), probe, true, &why);
    REQUIRE_MESSAGE(first, why);
    CHECK(first->pyccel == "2.2.3");
    CHECK(runs(tree) == 1);
    CHECK(find_python_facts(python.string(), probe, true, &why));
    CHECK(runs(tree) == 1);

    // pip install touches site-packages: the next build asks again.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tree.write("site-packages/new_package-1.0.dist-info/METADATA", "");
    CHECK_FALSE(find_python_facts(python.string(), probe, false, &why));
    CHECK(why.find("not been probed") != std::string::npos);
    CHECK(find_python_facts(python.string(), probe, true, &why));
    CHECK(runs(tree) == 2);
    CHECK(find_python_facts(python.string(), probe, false, &why));
    CHECK(runs(tree) == 2);
}

TEST_CASE("a probe beside a fallback root reads the preferred root's answers and records only in its own")
{
    test::TempTree tree;
    fs::path tool = tree.write("bin/tool", "#!/bin/sh\n");
    ToolProbe preferred(tree / "preferred/.probes");
    preferred.remember(tool, "version?", "13.0");
    ToolProbe fallback(tree / "fallback/.probes", tree / "preferred/.probes");
    int asked = 0;
    auto ask = [&] {
        ++asked;
        return std::string("asked");
    };
    CHECK(fallback.answer(tool, "version?", ask) == "13.0");
    CHECK(asked == 0);
    CHECK_FALSE(fs::exists(tree / "fallback/.probes"));
    CHECK(fallback.answer(tool, "other?", ask) == "asked");
    CHECK(asked == 1);
    CHECK(ToolProbe(tree / "fallback/.probes").answer(tool, "other?", ask) == "asked");  // recorded there
    CHECK(asked == 1);
    CHECK(preferred.answer(tool, "other?", ask) == "asked");  // and not in the preferred root
    CHECK(asked == 2);
}

TEST_CASE("a missing interpreter or a failing probe is reported, not thrown")
{
    test::TempTree tree;
    ToolProbe probe(tree / "probes");
    std::string why;
    CHECK_FALSE(find_python_facts((tree / "no-python").string(), probe, true, &why));
    CHECK(why.find("no Python interpreter") != std::string::npos);
    auto broken = tree.write("bin/broken", "#!/bin/sh\necho 'no module named json' >&2\nexit 1\n");
    ::chmod(broken.c_str(), 0755);
    CHECK_FALSE(find_python_facts(broken.string(), probe, true, &why));
    CHECK(why.find("no module named json") != std::string::npos);
}

TEST_CASE("Pyccel's diagnostics point at the user's file and line")
{
    std::string output =
        "\nERROR at annotation (semantic) stage\npyccel:\n"
        " |fatal [semantic]: /tmp/ws/src/pk/bad_kernels.py [3,15]| Undefined variable (y)\n";
    std::string log = format_pyccel_log(output, {{"/tmp/ws/src/", "/home/me/code/"}});
    CHECK(log.rfind("/home/me/code/pk/bad_kernels.py:3:15: fatal: Undefined variable (y)\n", 0) == 0);
    CHECK(log.find(" |fatal [semantic]: /home/me/code/pk/bad_kernels.py [3,15]| Undefined variable (y)") !=
          std::string::npos);
    CHECK(log.find("/tmp/ws") == std::string::npos);

    std::string syntax =
        "pyccel:\n |fatal [None]: /tmp/ws/src/m.py| Python syntax error (\nexpected ':' (<unknown>, line 7))\n";
    CHECK(
        format_pyccel_log(syntax, {{"/tmp/ws/src/", "/src/"}}).rfind("/src/m.py:7: fatal: Python syntax error (", 0) ==
        0);
    CHECK(format_pyccel_log("no diagnostics here\n", {}) == "no diagnostics here\n");

    std::string generated = "RuntimeError: Failed to build module\n/tmp/ws/m.c:83:34: error: user defined reduction\n";
    CHECK(format_pyccel_log(generated, {}, "/src/pk/m.py").rfind("/src/pk/m.py: error: Pyccel translated it", 0) == 0);
}

TEST_CASE("where cunumpy's headers are is asked again when the environment puts another cunumpy first")
{
    test::TempTree tree;
    std::filesystem::create_directories(tree / "site-packages/cunumpy/cuda/include");
    std::filesystem::create_directories(tree / "alt/cunumpy/cuda/include");
    // find_spec's answer: the PYTHONPATH folder's cunumpy when one is set, as Python finds it.
    auto python =
        tree.write("bin/python", "#!/bin/sh\necho run >> " + (tree / "runs").string() +
                                     "\nif [ -n \"$PYTHONPATH\" ]; then echo \"$PYTHONPATH/cunumpy/cuda/include\"; "
                                     "echo \"$PYTHONPATH\"; else echo '" +
                                     (tree / "site-packages/cunumpy/cuda/include").string() + "'; fi\necho '" +
                                     (tree / "site-packages").string() + "'\n");
    ::chmod(python.c_str(), 0755);
    ToolProbe probe(tree / "probes");
    ::unsetenv("PYTHONPATH");
    CHECK(find_cunumpy_include_dir(python.string(), probe) == tree / "site-packages/cunumpy/cuda/include");
    CHECK(find_remembered_cunumpy_include_dir(python.string(), probe) == tree / "site-packages/cunumpy/cuda/include");
    CHECK(runs(tree) == 1);
    {
        test::ScopedEnv path("PYTHONPATH", (tree / "alt").string());
        CHECK_FALSE(find_remembered_cunumpy_include_dir(python.string(), probe));  // never asked with it
        CHECK(find_cunumpy_include_dir(python.string(), probe) == tree / "alt/cunumpy/cuda/include");
        CHECK(runs(tree) == 2);
    }
    CHECK(find_cunumpy_include_dir(python.string(), probe) == tree / "site-packages/cunumpy/cuda/include");
    CHECK(runs(tree) == 2);
    // An install into site-packages: asked again.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tree.write("site-packages/other-1.0.dist-info/METADATA", "");
    CHECK_FALSE(find_remembered_cunumpy_include_dir(python.string(), probe));
    CHECK(find_cunumpy_include_dir(python.string(), probe) == tree / "site-packages/cunumpy/cuda/include");
    CHECK(runs(tree) == 3);
}

TEST_SUITE_END();
