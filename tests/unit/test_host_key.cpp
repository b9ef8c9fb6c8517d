#include "host/host_key.hpp"
#include "host/host_planner.hpp"
#include "host/host_setup.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"

#include "host_toolchain.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <cstdlib>

TEST_SUITE_BEGIN("host_key");

using namespace ck;
using nlohmann::json;

namespace {

HostToolchain toolchain() { return test::host_toolchain(); }

std::vector<const KernelSource*> pointers(const std::vector<KernelSource>& kernels)
{
    std::vector<const KernelSource*> out;
    for (const auto& k : kernels) out.push_back(&k);
    return out;
}

const HostModule* find_module(const HostPlan& plan, const std::string& name, std::size_t* index = nullptr)
{
    for (std::size_t i = 0; i < plan.modules.size(); ++i)
        if (plan.modules[i].name == name) {
            if (index) *index = i;
            return &plan.modules[i];
        }
    return nullptr;
}

// pk/kernels/k1 imports pk.util.lin_kernels and pk.util.args_kernels; args imports lin.
void write_graph_tree(const test::TempTree& tree, const std::string& top = "src")
{
    tree.write(top + "/pk/__init__.py", "");
    tree.write(top + "/pk/kernels/__init__.py", "");
    tree.write(top + "/pk/util/lin_kernels.py", "def dot(a: 'float[:]', b: 'float[:]') -> float:\n    return 0.0\n");
    tree.write(top + "/pk/util/args_kernels.py", "from pk.util.lin_kernels import dot\n\nclass Args:\n    pass\n");
    tree.write(top + "/pk/kernels/k1/k1_kernels.py",
               "\"\"\"Docs: from pk.util.not_imported import x\"\"\"\n"
               "from numpy import floor\n"
               "from pk.util.lin_kernels import dot\n"
               "from pk.util.args_kernels import Args\n\n"
               "def k1(args: 'Args', b: 'float[:]'):\n    pass\n");
    tree.write(top + "/pk/kernels/k2/k2_kernels.py", "def k2(x: 'float[:]'):\n    pass\n");
}

}  // namespace

TEST_CASE("module text as inspect.getsource gives it")
{
    CHECK(python_source_text("\xEF\xBB\xBF"
                             "a\r\nb\rc") == "a\nb\nc\n");
    CHECK(python_source_text("x = 1\n") == "x = 1\n");
    CHECK(python_source_text("") == "");
}

TEST_CASE("cunumpy's key, checked against PyccelCache.build_key of cunumpy 0.7.1")
{
    // The expected values were computed by cunumpy's own build_key for a file
    // holding "\ufeffdef f(x: 'float[:]'):\r\n    x[0] = 1.0" with Pyccel 2.2.3
    // and the sys.version and platform.platform() of toolchain().
    std::string text = python_source_text(
        "\xEF\xBB\xBF"
        "def f(x: 'float[:]'):\r\n    x[0] = 1.0");
    CHECK(cunumpy_build_key(text, "c", true, toolchain().python) == "89a3a038fe150c8f7652");
    CHECK(cunumpy_build_key(text, "fortran", false, toolchain().python) == "b0001c3ce97983e69a60");
    CHECK(cunumpy_entry_name("pk.kernels.push.push_kernels", "89a3a038fe150c8f7652") ==
          "push_kernels-89a3a038fe150c8f7652");
    CHECK(cunumpy_entry_name("lonely", "0123") == "lonely-0123");
    Sha256Stream text_hash;
    text_hash.update(text);
    CHECK(cunumpy_build_key(text_hash, "c", true, toolchain().python) == "89a3a038fe150c8f7652");
    CHECK(text_hash.hex() == sha256_hex(text));  // the stream goes on unchanged
}

TEST_CASE("a module that calls the OpenMP runtime is recognised")
{
    CHECK(uses_openmp_runtime("from pyccel.stdlib.internal.openmp import omp_get_thread_num\n"));
    CHECK_FALSE(uses_openmp_runtime("#$ omp parallel for\n"));
}

TEST_CASE("every input changes our key, and the imports' keys do too")
{
    auto t = toolchain();
    std::map<std::string, std::string> imports = {{"pk.util.lin_kernels", std::string(64, 'a')}};
    std::string base = cache_key(host_key_inputs("pk.m", "m.py", sha256_hex("src"), imports, t, true));
    auto changed = [&](auto&& change) {
        auto copy = t;
        auto imports_copy = imports;
        std::string module = "pk.m", source = "src";
        bool openmp = true;
        change(copy, imports_copy, module, source, openmp);
        return cache_key(host_key_inputs(module, "m.py", sha256_hex(source), imports_copy, copy, openmp));
    };
    using T = HostToolchain;
    using I = std::map<std::string, std::string>;
    CHECK(changed([](T&, I&, std::string&, std::string& s, bool&) { s += " "; }) != base);
    CHECK(changed([](T&, I& i, std::string&, std::string&, bool&) {
              i["pk.util.lin_kernels"] = std::string(64, 'b');
          }) != base);
    CHECK(changed([](T&, I& i, std::string&, std::string&, bool&) { i["pk.other"] = std::string(64, 'c'); }) != base);
    CHECK(changed([](T&, I&, std::string& m, std::string&, bool&) { m = "pk.n"; }) != base);
    CHECK(changed([](T&, I&, std::string&, std::string&, bool& o) { o = false; }) != base);
    CHECK(changed([](T& c, I&, std::string&, std::string&, bool&) { c.language = "fortran"; }) != base);
    CHECK(changed([](T& c, I&, std::string&, std::string&, bool&) { c.pyccel = "pyccel 2.2.2"; }) != base);
    CHECK(changed([](T& c, I&, std::string&, std::string&, bool&) { c.c_compiler = "gcc 13"; }) != base);
    CHECK(changed([](T& c, I&, std::string&, std::string&, bool&) { c.python.version = "3.12.1"; }) != base);
    CHECK(changed([](T& c, I&, std::string&, std::string&, bool&) { c.python.platform = "Linux-6.2"; }) != base);
    CHECK(changed([](T& c, I&, std::string&, std::string&, bool&) { c.python.numpy = "2.3.0"; }) != base);
    CHECK(changed([](T& c, I&, std::string&, std::string&, bool&) { c.cache_root = "/moved/cache"; }) != base);
    CHECK(changed([](T&, I&, std::string&, std::string&, bool&) {}) == base);
}

TEST_CASE("the module graph: imports first, transitive closure, kernels labelled by their folder")
{
    test::TempTree tree;
    write_graph_tree(tree);
    Config config;
    auto kernels = find_kernels({tree / "src"}, config);
    REQUIRE(kernels.size() == 2);
    HostPlan plan = plan_host_builds(pointers(kernels), toolchain());
    REQUIRE(plan.modules.size() == 4);
    std::size_t lin = 0, args = 0, k1 = 0;
    REQUIRE(find_module(plan, "pk.util.lin_kernels", &lin));
    REQUIRE(find_module(plan, "pk.util.args_kernels", &args));
    REQUIRE(find_module(plan, "pk.kernels.k1.k1_kernels", &k1));
    CHECK(lin < args);
    CHECK(args < k1);
    CHECK(plan.jobs[k1].closure == std::vector<std::size_t>{lin, args});
    CHECK(plan.modules[k1].imports.size() == 2);
    CHECK(plan.modules[lin].imported_by.size() == 2);
    CHECK(host_label(plan.modules[k1]) == "pk.kernels.k1");
    CHECK(host_label(plan.modules[lin]) == "pk.util.lin_kernels");
    CHECK(plan.modules[k1].relative == "pk/kernels/k1/k1_kernels.py");
    CHECK(plan.jobs[k1].inputs["imports"] ==
          json{{"pk.util.args_kernels", plan.jobs[args].key}, {"pk.util.lin_kernels", plan.jobs[lin].key}});
    CHECK(plan.jobs[k1].cunumpy_name.rfind("k1_kernels-", 0) == 0);
    for (const auto& module : plan.modules) CHECK(module.problem.empty());
}

TEST_CASE("editing an imported module changes the key of every module above it, and only those")
{
    test::TempTree tree;
    write_graph_tree(tree);
    Config config;
    auto kernels = find_kernels({tree / "src"}, config);
    HostPlan before = plan_host_builds(pointers(kernels), toolchain());
    tree.write("src/pk/util/lin_kernels.py", "def dot(a: 'float[:]', b: 'float[:]') -> float:\n    return 1.0\n");
    HostPlan after = plan_host_builds(pointers(kernels), toolchain());
    std::size_t k1 = 0, k2 = 0, args = 0;
    find_module(before, "pk.kernels.k1.k1_kernels", &k1);
    find_module(before, "pk.kernels.k2.k2_kernels", &k2);
    find_module(before, "pk.util.args_kernels", &args);
    CHECK(before.jobs[k1].key != after.jobs[k1].key);
    CHECK(before.jobs[args].key != after.jobs[args].key);
    CHECK(before.jobs[k2].key == after.jobs[k2].key);
    // cunumpy's key covers the module's own source only: unchanged for k1.
    CHECK(before.jobs[k1].cunumpy_name == after.jobs[k1].cunumpy_name);
    CHECK(describe_host_change(before.jobs[k1].inputs, after.jobs[k1].inputs) ==
          "imported module pk.util.args_kernels changed");
    CHECK(describe_host_change(before.jobs[args].inputs, after.jobs[args].inputs) ==
          "imported module pk.util.lin_kernels changed");
}

TEST_CASE("a plan from the source record equals one that reads every module, and sees edits")
{
    test::TempTree tree;
    write_graph_tree(tree);
    for (const auto& entry : std::filesystem::recursive_directory_iterator(tree / "src"))
        std::filesystem::last_write_time(entry.path(),
                                         std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
    Config config;
    auto kernels = find_kernels({tree / "src"}, config);
    HostPlan read = plan_host_builds(pointers(kernels), toolchain());
    std::filesystem::path stored = tree / "record/sources";
    auto recorded = [&](std::size_t* files_read = nullptr) {
        SourceRecord record(stored, std::chrono::nanoseconds(0));  // trusts files whose times it just set
        HostPlanOptions options;
        options.record = &record;
        HostPlan plan = plan_host_builds(pointers(kernels), toolchain(), options);
        record.save();
        if (files_read) *files_read = record.files_read();
        return plan;
    };
    std::size_t files_read = 0;
    recorded();
    HostPlan warm = recorded(&files_read);
    CHECK(files_read == 0);
    REQUIRE(warm.jobs.size() == read.jobs.size());
    for (std::size_t i = 0; i < read.jobs.size(); ++i) {
        CHECK(warm.jobs[i].key == read.jobs[i].key);
        CHECK(warm.jobs[i].cunumpy_name == read.jobs[i].cunumpy_name);
        CHECK(warm.jobs[i].content_key == read.jobs[i].content_key);
        CHECK(warm.modules[i].source.empty());
        CHECK(planned_source(warm.modules[i]) == read.modules[i].source);
    }

    std::size_t k1 = 0;
    find_module(warm, "pk.kernels.k1.k1_kernels", &k1);
    SUBCASE("an edited import, with its modification time put back, changes the importer's key")
    {
        auto path = tree / "src/pk/util/lin_kernels.py";
        auto time = std::filesystem::last_write_time(path);
        tree.write("src/pk/util/lin_kernels.py", "def dot(a: 'float[:]', b: 'float[:]') -> float:\n    return 1.0\n");
        std::filesystem::last_write_time(path, time);
        HostPlan edited = recorded(&files_read);
        CHECK(files_read == 1);
        CHECK(edited.jobs[k1].key != warm.jobs[k1].key);
    }
    SUBCASE("a module edited after its key was planned is not built from its new text")
    {
        tree.write("src/pk/kernels/k1/k1_kernels.py", "def k1(b: 'float[:]'):\n    pass\n");
        CHECK_THROWS_WITH_AS(planned_source(warm.modules[k1]),
                             doctest::Contains("changed after this build planned its key"), SourceError);
    }
}

TEST_CASE("a second checkout of the same sources has the same keys")
{
    test::TempTree tree;
    write_graph_tree(tree, "one");
    write_graph_tree(tree, "elsewhere/two");
    Config config;
    auto first = find_kernels({tree / "one"}, config);
    auto second = find_kernels({tree / "elsewhere/two"}, config);
    HostPlan a = plan_host_builds(pointers(first), toolchain());
    HostPlan b = plan_host_builds(pointers(second), toolchain());
    REQUIRE(a.jobs.size() == b.jobs.size());
    for (std::size_t i = 0; i < a.jobs.size(); ++i) CHECK(a.jobs[i].key == b.jobs[i].key);
}

TEST_CASE("an import cycle is a problem of its modules and their importers, not of the others")
{
    test::TempTree tree;
    tree.write("src/pk/__init__.py", "");
    tree.write("src/pk/kernels/__init__.py", "");
    tree.write("src/pk/a_kernels.py", "from pk.b_kernels import g\n");
    tree.write("src/pk/b_kernels.py", "from pk.a_kernels import f\n");
    tree.write("src/pk/kernels/k1/k1_kernels.py", "from pk.a_kernels import f\n\ndef k1():\n    pass\n");
    tree.write("src/pk/kernels/k2/k2_kernels.py", "def k2():\n    pass\n");
    Config config;
    auto kernels = find_kernels({tree / "src"}, config);
    HostPlan plan = plan_host_builds(pointers(kernels), toolchain());
    CHECK(find_module(plan, "pk.kernels.k2.k2_kernels")->problem.empty());
    for (const char* name : {"pk.a_kernels", "pk.b_kernels", "pk.kernels.k1.k1_kernels"}) {
        const HostModule* module = find_module(plan, name);
        REQUIRE(module);
        CHECK(module->problem.find("import cycle (pk.") != std::string::npos);
    }
    CHECK(find_module(plan, "pk.a_kernels")
              ->problem.find(": in an import cycle (pk.a_kernels -> pk.b_kernels -> "
                             "pk.a_kernels)") != std::string::npos);
    CHECK(find_module(plan, "pk.kernels.k1.k1_kernels")->problem.find(": behind an import cycle") != std::string::npos);
}

TEST_CASE("a module that imports itself is a cycle of one, in each form of import; its importer is behind it")
{
    // Pyccel refuses a module that imports itself ("Imported files must be
    // pyccelised before they can be used"): planning says so before any compile.
    for (std::string self_import :
         {"from pk.s_kernels import f\n", "from .s_kernels import f\n", "import pk.s_kernels\n"}) {
        CAPTURE(self_import);
        test::TempTree tree;
        tree.write("src/pk/__init__.py", "");
        tree.write("src/pk/s_kernels.py", self_import + "\ndef f():\n    pass\n");
        tree.write("src/pk/k/k_kernels.py", "from pk.s_kernels import f\n\ndef k():\n    pass\n");
        tree.write("src/pk/j/j_kernels.py", "def j():\n    pass\n");
        auto kernels = find_kernels({tree / "src/pk"}, Config{});
        HostPlan plan = plan_host_builds(pointers(kernels), toolchain());
        REQUIRE(find_module(plan, "pk.s_kernels"));
        CHECK(find_module(plan, "pk.s_kernels")->problem.find(": in an import cycle (pk.s_kernels -> pk.s_kernels)") !=
              std::string::npos);
        CHECK(find_module(plan, "pk.k.k_kernels")
                  ->problem.find(": behind an import cycle (pk.s_kernels -> pk.s_kernels)") != std::string::npos);
        CHECK(find_module(plan, "pk.j.j_kernels")->problem.empty());
    }
}

TEST_CASE("a module in a cycle says so, whichever import comes first, even when it also imports another cycle")
{
    // m imports the a <-> b cycle and n; n imports m: m and n are in a cycle of their own.
    for (bool cycle_first : {false, true}) {
        test::TempTree tree;
        tree.write("src/top/__init__.py", "");
        tree.write("src/top/a.py", "from top.b import g\n");
        tree.write("src/top/b.py", "from top.a import f\n");
        std::string to_a = "from top.a import f\n", to_n = "from top.n import h\n";
        tree.write("src/top/m.py", cycle_first ? to_n + to_a : to_a + to_n);
        tree.write("src/top/n.py", "from top.m import k\n");
        tree.write("src/top/k/k_kernels.py", "from top.m import k\n\ndef k():\n    pass\n");
        auto kernels = find_kernels({tree / "src/top"}, Config{});
        HostPlan plan = plan_host_builds(pointers(kernels), toolchain());
        CHECK(find_module(plan, "top.m")->problem.find(": in an import cycle (top.m -> top.n -> top.m)") !=
              std::string::npos);
        CHECK(find_module(plan, "top.n")->problem.find(": in an import cycle (top.n -> top.m -> top.n)") !=
              std::string::npos);
        CHECK(find_module(plan, "top.a")->problem.find(": in an import cycle (top.a -> top.b -> top.a)") !=
              std::string::npos);
        CHECK(find_module(plan, "top.k.k_kernels")->problem.find(": behind an import cycle") != std::string::npos);
    }
}

TEST_CASE("each module stuck behind a cycle names a cycle of its own package, when packages hold cycles alike")
{
    test::TempTree tree;
    std::vector<const char*> packages = {"alpha", "beta"};
    for (std::string p : packages) {
        tree.write("src/" + p + "/__init__.py", "");
        tree.write("src/" + p + "/c1.py", "from " + p + ".c2 import g\n");
        tree.write("src/" + p + "/c2.py", "from " + p + ".c1 import f\n");
        tree.write("src/" + p + "/k/k_kernels.py", "from " + p + ".c1 import f\n\ndef k():\n    pass\n");
    }
    auto kernels = find_kernels({tree / "src/alpha", tree / "src/beta"}, Config{});
    HostPlan plan = plan_host_builds(pointers(kernels), toolchain());
    for (std::string p : packages) {
        for (const std::string module : {".k.k_kernels", ".c1", ".c2"}) {
            const HostModule* found = find_module(plan, p + module);
            REQUIRE(found);
            std::string other = p == "alpha" ? "beta." : "alpha.";
            CHECK(found->problem.find("import cycle (" + p + ".") != std::string::npos);
            CHECK(found->problem.find(other) == std::string::npos);
        }
    }
}

TEST_CASE("describe_host_change names the input that differs")
{
    json a = {{"source", {{"file", "m.py"}, {"sha256", "1"}}}, {"imports", {{"x", "1"}}}, {"language", "c"}};
    json b = a;
    b["source"]["sha256"] = "2";
    CHECK(describe_host_change(a, b) == "source m.py changed");
    b = a;
    b["imports"]["y"] = "1";
    CHECK(describe_host_change(a, b) == "now imports y");
    b = a;
    b["imports"] = json::object();
    CHECK(describe_host_change(a, b) == "no longer imports x");
    b = a;
    b["language"] = "fortran";
    CHECK(describe_host_change(a, b) == "language: c -> fortran");
    CHECK(describe_host_change(a, a) == "");
}

TEST_CASE("OpenMP: the config or flag, else <NAME>_OPENMP as cunumpy reads it, else on")
{
    Config config;
    ::unsetenv("MY_SIM_OPENMP");
    CHECK(host_openmp(config, "my-sim"));
    for (const char* off : {"0", "false", "No", "OFF"}) {
        ::setenv("MY_SIM_OPENMP", off, 1);
        CHECK_FALSE(host_openmp(config, "my-sim"));
    }
    ::setenv("MY_SIM_OPENMP", "1", 1);
    CHECK(host_openmp(config, "my-sim"));
    ::setenv("MY_SIM_OPENMP", "0", 1);
    config.openmp = true;
    CHECK(host_openmp(config, "my-sim"));
    ::unsetenv("MY_SIM_OPENMP");
    config.openmp = false;
    CHECK_FALSE(host_openmp(config, "my-sim"));
}

TEST_SUITE_END();
