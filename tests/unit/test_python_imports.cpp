#include "host/python_imports.hpp"

#include "temp_tree.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("python_imports");

using namespace ck;

namespace {

std::vector<std::string> modules(const std::string& source)
{
    std::vector<std::string> names;
    for (const auto& import : scan_python_imports(source))
        names.push_back(import.module + "@" + std::to_string(import.line));
    return names;
}

}  // namespace

TEST_CASE("import and from statements name modules, with their lines")
{
    const char* source =
        "\"Evaluation kernels.\"\n"
        "from numpy import empty, mod\n"
        "import struphy.geometry.evaluation_kernels as evaluation_kernels\n"
        "import a.b, c as d  # two modules\n"
        "from struphy.kernel_arguments.pusher_args_kernels import (\n"
        "    DerhamArguments,  # (a comment with a parenthesis\n"
        "    DomainArguments,\n"
        ")\n"
        "from .helpers import f; from ..util.lin import dot\n"
        "def k(x: 'float[:]'):\n"
        "    from pyccel.stdlib.internal.openmp import omp_get_thread_num\n"
        "    y = 1 \\\n"
        "        + 2\n"
        "import after.continuation\n";
    CHECK(modules(source) == std::vector<std::string>{"numpy@2", "struphy.geometry.evaluation_kernels@3", "a.b@4",
                                                      "c@4", "struphy.kernel_arguments.pusher_args_kernels@5",
                                                      ".helpers@9", "..util.lin@9", "pyccel.stdlib.internal.openmp@11",
                                                      "after.continuation@14"});
}

TEST_CASE("text in strings and comments is not an import")
{
    const char* source =
        "\"\"\"Kernels, one folder each::\n"
        "\n"
        "    from struphy.pic.pushing.kernels.push_eta_stage import push_eta_stage\n"
        "    import not.a.module\n"
        "\"\"\"\n"
        "# import commented.out\n"
        "text = 'import quoted' + \"from x import y\"\n"
        "doc = r'''\n"
        "import raw.string\n"
        "'''\n"
        "escaped = 'it\\'s'; import real.one\n";
    CHECK(modules(source) == std::vector<std::string>{"real.one@11"});
}

TEST_CASE("statements that are not imports, or not valid ones, are skipped")
{
    CHECK(modules("important = 1\nfromage = 2\nimport\nfrom x\nfrom 1x import y\nimport a..b\n").empty());
    CHECK(modules("from . import sibling\n") == std::vector<std::string>{".@1"});
    // An unterminated string ends with its line, as Python's tokenizer reports it.
    CHECK(modules("s = 'oops\nimport next.line\n") == std::vector<std::string>{"next.line@2"});
}

TEST_SUITE("python imports")
{
    TEST_CASE("Python's tokenizer decides what is code: f-strings, continuations, spacing")
    {
        CHECK(modules("x = f'{\"import no.module\"}'\nimport a . b\n") == std::vector<std::string>{"a.b@2"});
        CHECK(modules("from ...pkg.m import (x,\n    y)\nfrom . import z\n") ==
              std::vector<std::string>{"...pkg.m@1", ".@3"});
        CHECK(modules("import a as b, c.d as e\nimport x as\n") == std::vector<std::string>{"a@1", "c.d@1"});
        CHECK(modules("if x: import hidden\nclass A: pass\n").empty());  // compound statements, as before
    }
}

TEST_CASE("imports resolve as Pyccel resolves them, inside the source root only")
{
    test::TempTree tree;
    auto root = tree.root() / "src";
    auto importer = tree.write("src/pk/kernels/k1/k1_kernels.py", "");
    tree.write("src/pk/util/lin_kernels.py", "");
    tree.write("src/pk/kernels/k1/helpers.py", "");
    tree.write("src/pk/kernels/shared.py", "");
    tree.write("src/pk/kernels/k1/pk/shadow.py", "");
    tree.write("outside.py", "");

    CHECK(resolve_python_import("pk.util.lin_kernels", importer, root) == root / "pk/util/lin_kernels.py");
    CHECK(resolve_python_import(".helpers", importer, root) == root / "pk/kernels/k1/helpers.py");
    CHECK(resolve_python_import("..shared", importer, root) == root / "pk/kernels/shared.py");
    // Pyccel looks below the importer's folder first.
    CHECK(resolve_python_import("pk.shadow", importer, root) == root / "pk/kernels/k1/pk/shadow.py");
    CHECK_FALSE(resolve_python_import("numpy", importer, root));
    CHECK_FALSE(resolve_python_import("pk.util", importer, root));  // a package, not a module
    CHECK_FALSE(resolve_python_import("....outside", importer, root));
    CHECK_FALSE(resolve_python_import(".", importer, root));
    CHECK(python_module_name(root / "pk/util/lin_kernels.py", root) == "pk.util.lin_kernels");
}

TEST_CASE("the libraries Pyccel translates itself never resolve, even where the source root holds them")
{
    // An installed package: its source root is site-packages, beside pyccel and numpy.
    test::TempTree tree;
    auto root = tree.root() / "site-packages";
    auto importer = tree.write("site-packages/pk/k_kernels.py", "");
    tree.write("site-packages/pyccel/decorators.py", "");
    tree.write("site-packages/numpy/linalg.py", "");
    tree.write("site-packages/pyccelx/util.py", "");
    CHECK_FALSE(resolve_python_import("pyccel.decorators", importer, root));
    CHECK_FALSE(resolve_python_import("numpy.linalg", importer, root));
    CHECK(resolve_python_import("pyccelx.util", importer, root) == root / "pyccelx/util.py");
}

TEST_SUITE_END();
