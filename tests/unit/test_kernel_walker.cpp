#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <algorithm>

TEST_SUITE_BEGIN("kernel_walker");

using namespace ck;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> modules(const std::vector<KernelSource>& kernels)
{
    std::vector<std::string> names;
    for (const auto& k : kernels) names.push_back(k.module);
    return names;
}

// Every folder of `dir` below `base` is a Python package.
void make_package(const test::TempTree& tree, const std::string& base, const std::string& dir)
{
    fs::path path = base;
    for (const auto& part : fs::path(dir)) {
        path /= part;
        tree.write((path / "__init__.py").string(), "");
    }
}

}  // namespace

TEST_CASE("a kernel package: subfolders with <name>_kernels.py are kernels")
{
    test::TempTree tree;
    make_package(tree, "src", "my_sim/kernels");
    tree.kernel("src/my_sim/kernels", "push", "__global__ void push(double* x, long n) {}\n");
    tree.kernel("src/my_sim/kernels", "sort");
    tree.write("src/my_sim/kernels/helpers/utils.py", "");  // not a kernel: no helpers_kernels.py
    auto kernels = find_kernels({tree / "src/my_sim/kernels"}, Config{});
    REQUIRE(modules(kernels) == std::vector<std::string>{"my_sim.kernels.push", "my_sim.kernels.sort"});
    const auto& push = kernels[0];
    CHECK(push.name == "push");
    CHECK(push.top_package == "my_sim");
    CHECK(push.source_root == tree / "src");
    REQUIRE(push.cuda_file);
    CHECK(*push.cuda_file == tree / "src/my_sim/kernels/push/push_cuda.cu");
    REQUIRE(push.host.size() == 1);
    CHECK(push.host[0].kind == "pyccel");
    CHECK_FALSE(kernels[1].cuda_file);
}

TEST_CASE("a whole tree with kernel packages at several depths")
{
    test::TempTree tree;
    make_package(tree, "src", "code/geometry/kernels");
    make_package(tree, "src", "code/pic/pushing/kernels");
    tree.kernel("src/code/geometry/kernels", "evaluate");
    tree.kernel("src/code/pic/pushing/kernels", "push_eta");
    auto kernels = find_kernels({tree / "src"}, Config{});
    CHECK(modules(kernels) ==
          std::vector<std::string>{"code.geometry.kernels.evaluate", "code.pic.pushing.kernels.push_eta"});
}

TEST_CASE("a module found in two trees: the first is kept, the second named in a warning")
{
    test::TempTree tree;
    for (const char* root : {"s1", "s2"}) {
        make_package(tree, root, "pkg");
        tree.kernel(std::string(root) + "/pkg", "push");
    }
    // Its parent is still a package, not a kernel, when its only kernel is left out.
    tree.kernel("s2", "pkg");
    std::vector<std::string> warnings;
    auto kernels =
        find_kernels({tree / "s1", tree / "s2"}, Config{}, [&](const std::string& w) { warnings.push_back(w); });
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].folder == tree / "s1/pkg/push");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find((tree / "s2/pkg/push").string() + ": kernel module 'pkg.push' was found already in " +
                           (tree / "s1/pkg/push").string()) == 0);
    // The same tree given twice is walked once, without a warning.
    warnings.clear();
    CHECK(find_kernels({tree / "s1", tree / "s1/pkg"}, Config{}, [&](const std::string& w) {
              warnings.push_back(w);
          }).size() == 1);
    CHECK(warnings.empty());
}

TEST_CASE("one kernel folder given directly")
{
    test::TempTree tree;
    make_package(tree, "", "pkg/kernels");
    auto folder = tree.kernel("pkg/kernels", "push");
    auto kernels = find_kernels({folder}, Config{});
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].module == "pkg.kernels.push");
}

TEST_CASE("from_folder layouts: the host-suffix module makes a kernel, _numba and _numpy add implementations")
{
    test::TempTree tree;
    make_package(tree, "", "pkg/kernels");
    tree.write("pkg/kernels/push/push_kernels.py", "def push(x): pass\n");
    tree.write("pkg/kernels/push/push_pyccel.py", "def push(x): pass\n");
    tree.write("pkg/kernels/push/push_numba.py", "def push(x): pass\n");
    tree.write("pkg/kernels/push/push_numpy.py", "def push(x): pass\n");
    tree.write("pkg/kernels/gather/gather_numpy.py", "def gather(x): pass\n");
    tree.write("pkg/kernels/scatter/scatter_pyccel.py", "def scatter(x): pass\n");
    auto kernels = find_kernels({tree / "pkg"}, Config{});
    REQUIRE(kernels.size() == 1);  // cunumpy's from_package: neither gather nor scatter
    REQUIRE(kernels[0].host.size() == 3);
    CHECK(kernels[0].host[0].file.filename() == "push_kernels.py");
    CHECK(kernels[0].host[1].kind == "numba");
    CHECK(kernels[0].host[2].kind == "numpy");
    Config pyccel_suffix;
    pyccel_suffix.host_suffix = "_pyccel";  // from_folder(host_suffix="_pyccel"), as the guide's example
    auto found = find_kernels({tree / "pkg"}, pyccel_suffix);
    REQUIRE(found.size() == 2);
    CHECK(found[0].host[0].file.filename() == "push_pyccel.py");
    CHECK(found[1].name == "scatter");
}

TEST_CASE("suffixes are configurable")
{
    test::TempTree tree;
    tree.write("pkg/kernels/push/push_host.py", "def push(x): pass\n");
    tree.write("pkg/kernels/push/push_gpu.cu", "__global__ void push(double* x) {}\n");
    Config config;
    config.host_suffix = "_host";
    config.cuda_suffix = "_gpu.cu";
    auto kernels = find_kernels({tree / "pkg"}, config);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].cuda_file);
    CHECK(find_kernels({tree / "pkg"}, Config{}).empty());
}

TEST_CASE("hidden folders, __pycache__ and __pyccel__ are skipped")
{
    test::TempTree tree;
    tree.kernel("pkg/.hidden", "push");
    tree.kernel("pkg/__pycache__", "push");
    tree.kernel("pkg/__pyccel__", "push");
    tree.kernel("pkg/kernels", "deposit");
    auto kernels = find_kernels({tree / "pkg"}, Config{});
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "deposit");
}

TEST_CASE("symlinked folders are followed once, loops are not followed")
{
    test::TempTree tree;
    tree.kernel("real/kernels", "push");
    fs::create_directory_symlink(tree / "real/kernels", tree / "real/alias");
    fs::create_directory_symlink(tree / "real", tree / "real/kernels/loop");
    std::vector<std::string> warnings;
    auto kernels = find_kernels({tree / "real"}, Config{}, [&](const std::string& w) { warnings.push_back(w); });
    REQUIRE(kernels.size() == 1);
    CHECK_FALSE(warnings.empty());

    test::TempTree other;
    other.kernel("elsewhere/kernels", "deposit");
    fs::create_directory_symlink(other / "elsewhere", tree / "real/linked");
    kernels = find_kernels({tree / "real"}, Config{});
    CHECK(kernels.size() == 2);
}

TEST_CASE("the walk reads kernel files from folder listings as a stat would: links to files count, folders do not")
{
    test::TempTree tree;
    make_package(tree, "src", "sim/kernels");
    tree.write("shared/push_kernels.py", "def push(x: 'float[:]'):\n    x[:] = 0.0\n");
    tree.write("shared/push_cuda.cu", "__global__ void push(double* x) {}\n");
    tree.write("shared/push_numpy.py", "def push(x):\n    x[:] = 0.0\n");
    fs::create_directories(tree / "src/sim/kernels/push");
    for (const char* name : {"push_kernels.py", "push_cuda.cu", "push_numpy.py"})
        fs::create_symlink(tree / "shared" / name, tree / "src/sim/kernels/push" / name);
    fs::create_directories(tree / "src/sim/kernels/sort/sort_kernels.py");  // a folder of that name: not a kernel
    fs::create_symlink(tree / "missing_kernels.py", tree / "src/sim/kernels/gone_kernels.py");
    fs::create_directories(tree / "src/sim/kernels/gone");
    fs::rename(tree / "src/sim/kernels/gone_kernels.py", tree / "src/sim/kernels/gone/gone_kernels.py");  // dangling

    auto kernels = find_kernels({tree / "src"}, Config{});
    REQUIRE(modules(kernels) == std::vector<std::string>{"sim.kernels.push"});
    const auto& push = kernels.front();
    CHECK(push.top_package == "sim");  // the __init__.py chain above the kernel, as before
    CHECK(push.source_root == tree / "src");
    REQUIRE(push.cuda_file);
    REQUIRE(push.host.size() == 2);
    CHECK(push.host[1].kind == "numpy");
}

TEST_CASE("names over 48 characters get the guide's warning unless disabled")
{
    test::TempTree tree;
    std::string long_name(49, 'k');
    tree.kernel("pkg/kernels", long_name);
    std::vector<std::string> warnings;
    auto warn = [&](const std::string& w) { warnings.push_back(w); };
    find_kernels({tree / "pkg"}, Config{}, warn);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("48") != std::string::npos);
    CHECK(warnings[0].find("63") != std::string::npos);
    warnings.clear();
    Config quiet;
    quiet.check_name_length = false;
    find_kernels({tree / "pkg"}, quiet, warn);
    CHECK(warnings.empty());
}

TEST_CASE("a missing path is a usage error naming it")
{
    test::TempTree tree;
    CHECK_THROWS_WITH_AS(find_kernels({tree / "nope"}, Config{}), doctest::Contains("nope: no such file"), UsageError);
}

TEST_CASE("two paths reaching one kernel list it once")
{
    test::TempTree tree;
    auto folder = tree.kernel("pkg/kernels", "push");
    CHECK(find_kernels({tree / "pkg", folder}, Config{}).size() == 1);
}

TEST_CASE("include folders: the kernel's own, the source root, then configured ones")
{
    test::TempTree tree;
    make_package(tree, "src", "sim/kernels");
    tree.kernel("src/sim/kernels", "push", "__global__ void push() {}\n");
    Config config;
    config.include_dirs = {tree / "include"};
    auto kernels = find_kernels({tree / "src"}, config);
    REQUIRE(kernels.size() == 1);
    auto dirs = kernels[0].include_dirs(config);
    REQUIRE(dirs.size() == 3);
    CHECK(dirs[0] == tree / "src/sim/kernels/push");
    CHECK(dirs[1] == tree / "src");
    CHECK(dirs[2] == tree / "include");
}

TEST_CASE("kernel_of_file maps sources, stubs and other files to their kernel")
{
    test::TempTree tree;
    auto folder = tree.kernel("pkg/kernels", "push", "__global__ void push() {}\n");
    tree.write("pkg/kernels/push/__pyccel__/push_kernels.pyi", "");
    CHECK(kernel_of_file(folder / "push_cuda.cu", Config{})->name == "push");
    CHECK(kernel_of_file(folder / "push_kernels.py", Config{})->name == "push");
    CHECK(kernel_of_file(folder / "__pyccel__/push_kernels.pyi", Config{})->name == "push");
    CHECK_FALSE(kernel_of_file(tree / "pkg/kernels/__init__.py", Config{}));
}

TEST_CASE("a folder holding kernels is a package even with <name>_kernels.py in it")
{
    test::TempTree tree;
    tree.write("code/bsplines/bsplines_kernels.py", "def eval(x): pass\n");
    tree.kernel("code/bsplines/kernels", "eval_spline");
    tree.kernel("code/other", "lonely");  // a real kernel folder: nothing below it
    auto kernels = find_kernels({tree / "code"}, Config{});
    REQUIRE(kernels.size() == 2);
    CHECK(kernels[0].name == "eval_spline");
    CHECK(kernels[1].name == "lonely");
}

TEST_CASE("a folder whose name is no Python identifier binds no function of its name: not a kernel")
{
    test::TempTree tree;
    tree.kernel("pkg/kernels", "my-kern");
    tree.kernel("pkg/kernels", "2d");
    tree.kernel("pkg/kernels", "push_2d");
    std::vector<std::string> warnings;
    auto kernels = find_kernels({tree / "pkg"}, Config{}, [&](const std::string& w) { warnings.push_back(w); });
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "push_2d");
    // Both named in one warning, located at the folder that holds them.
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].starts_with((tree / "pkg/kernels").string() + ": 2 folders are not kernels"));
    CHECK(warnings[0].find("2d/2d_kernels.py (no '2d'), my-kern/my-kern_kernels.py (no 'my-kern')") !=
          std::string::npos);
    CHECK(warnings[0].find("AttributeError") != std::string::npos);
}

TEST_CASE("folders listed in not-kernels are left out silently; a listed folder that is a kernel warns")
{
    test::TempTree tree;
    tree.kernel("pkg/kernels", "my-kern");
    tree.kernel("pkg/kernels", "2d");
    tree.write("pkg/geometry/cuboid/cuboid_kernels.py", "def other(): pass\n");
    tree.kernel("pkg/kernels", "push");
    Config config;
    config.source_file = tree / "pyproject.toml";
    // As the key gives them: resolved against pyproject.toml's folder, lexically normal.
    config.not_kernels = {tree / "pkg/kernels/my-kern", tree / "pkg/geometry/cuboid", tree / "pkg/kernels/push"};
    std::vector<std::string> warnings;
    auto kernels = find_kernels({tree / "pkg"}, config, [&](const std::string& w) { warnings.push_back(w); });
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "push");  // it defines push(): a kernel all the same
    REQUIRE(warnings.size() == 2);
    // Only the unlisted folder is named, alone, with the key to list it in.
    CHECK(warnings[0] == (tree / "pkg/kernels/push/push_kernels.py").string() +
                             ": defines push(), so this folder is a kernel (cunumpy takes it as one), though the "
                             "not-kernels key of " +
                             (tree / "pyproject.toml").string() + " lists it; remove it from not-kernels");
    CHECK(warnings[1].starts_with((tree / "pkg/kernels/2d/2d_kernels.py").string() + ": defines no function '2d'"));
    CHECK(warnings[1].find("not-kernels key") != std::string::npos);
    config.not_kernels.push_back(tree / "pkg/kernels/2d");
    warnings.clear();
    find_kernels({tree / "pkg"}, config, [&](const std::string& w) { warnings.push_back(w); });
    CHECK(warnings.size() == 1);
}

TEST_CASE(
    "a kernel folder renamed without its files is no kernel, with a warning; a module and a .cu of other names are not")
{
    test::TempTree tree;
    std::string cuda = "__global__ void push(double* x, int n) {}\n";
    tree.kernel("pkg/kernels", "push", cuda);
    fs::rename(tree / "pkg/kernels/push", tree / "pkg/kernels/push2");
    tree.kernel("pkg/kernels", "deposit", cuda);
    tree.write("pkg/kernels/deposit/helper_kernels.py", "def helper(): pass\n");  // no helper_cuda.cu: a module
    tree.write("pkg/pushing/prepare_push_cuda.cu", cuda);  // Struphy's shape: a .cu with no host module beside it
    tree.write("pkg/pushing/pusher_utilities_kernels.py", "def f(): pass\n");
    std::vector<std::string> warnings;
    auto kernels = find_kernels({tree / "pkg"}, Config{}, [&](const std::string& w) { warnings.push_back(w); });
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "deposit");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == (tree / "pkg/kernels/push2").string() +
                             ": holds push_kernels.py and push_cuda.cu, but cunumpy takes a kernel's name from its "
                             "folder, so this folder is no kernel (it would need push2_kernels.py); rename the folder "
                             "to 'push', or the files after 'push2'");
    Config custom;
    custom.host_suffix = "_host";
    custom.cuda_suffix = ".cu";
    tree.write("other/k/kern_host.py", "def kern(): pass\n");
    tree.write("other/k/kern.cu", cuda);
    warnings.clear();
    CHECK(find_kernels({tree / "other"}, custom, [&](const std::string& w) { warnings.push_back(w); }).empty());
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("holds kern_host.py and kern.cu") != std::string::npos);
}

TEST_CASE("a non-ASCII kernel name is a kernel, as Python imports it, with a warning that Pyccel cannot build it")
{
    test::TempTree tree;
    tree.kernel("pkg/kernels", "caf\u00e9");
    std::vector<std::string> warnings;
    auto kernels = find_kernels({tree / "pkg"}, Config{}, [&](const std::string& w) { warnings.push_back(w); });
    REQUIRE(kernels.size() == 1);
    CHECK_FALSE(pyccel_can_build(kernels[0].name));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("Pyccel cannot build it") != std::string::npos);
}

TEST_CASE("a host module that never binds the kernel's name is not a kernel; every way of binding it is")
{
    test::TempTree tree;
    tree.write("pkg/kernels/cuboid/cuboid_kernels.py", "def evaluate(x): pass\n");
    tree.write("pkg/kernels/alias/alias_kernels.py", "def _impl(x): pass\nalias = _impl\n");
    tree.write("pkg/kernels/imported/imported_kernels.py", "from .impl import imported\n");
    tree.write("pkg/kernels/guarded/guarded_kernels.py",
               "try:\n    import numba\nexcept ImportError:\n"
               "    def guarded(x): pass\n");
    tree.write("pkg/kernels/method/method_kernels.py", "class K:\n    def method(self): pass\n");
    std::vector<std::string> warnings;
    auto kernels = find_kernels({tree / "pkg"}, Config{}, [&](const std::string& w) { warnings.push_back(w); });
    std::vector<std::string> names;
    for (const auto& kernel : kernels) names.push_back(kernel.name);
    CHECK(names == std::vector<std::string>{"alias", "guarded", "imported"});
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("cuboid/cuboid_kernels.py (no 'cuboid'), method/method_kernels.py (no 'method')") !=
          std::string::npos);
    warnings.clear();
    find_kernels({tree / "pkg/kernels/cuboid"}, Config{}, [&](const std::string& w) { warnings.push_back(w); });
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == (tree / "pkg/kernels/cuboid/cuboid_kernels.py").string() +
                             ": defines no function 'cuboid', so this folder is not a kernel (cunumpy's "
                             "Kernel.from_folder raises AttributeError there, and with it KernelCatalog.from_package "
                             "of the parent package); define cuboid() in it, or rename the file if the folder is not "
                             "meant as a kernel, or list it in the not-kernels key (cunumpy-kernels(5))");
    CHECK_FALSE(kernel_of_file(tree / "pkg/kernels/cuboid/cuboid_kernels.py", Config{}));
}

TEST_CASE("the name-length warning follows the host suffix, as cunumpy's")
{
    test::TempTree tree;
    std::string name(48, 'k');
    tree.kernel("pkg/kernels", name);
    std::vector<std::string> warnings;
    auto warn = [&](const std::string& w) { warnings.push_back(w); };
    find_kernels({tree / "pkg"}, Config{}, warn);
    CHECK(warnings.empty());  // bind_c_ + 48 + _kernels = 63
    tree.write("pkg/kernels/" + name + "/" + name + "_kernels_host.py", "def " + name + "(x): pass\n");
    Config longer;
    longer.host_suffix = "_kernels_host";
    find_kernels({tree / "pkg"}, longer, warn);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("(68 characters)") != std::string::npos);
    CHECK(warnings[0].find("at most 43 characters") != std::string::npos);
    CHECK(max_kernel_name_length("_kernels") == 48);
}

TEST_CASE("the CUDA suffix is taken literally, as cunumpy takes it; one without its extension is warned about")
{
    test::TempTree tree;
    tree.kernel("pkg/kernels", "push", "__global__ void push(double* x) {}\n");
    std::vector<std::string> warnings;
    auto warn = [&](const std::string& w) { warnings.push_back(w); };
    Config config;
    auto kernels = find_kernels({tree / "pkg"}, config, warn);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].cuda_file == tree / "pkg/kernels/push/push_cuda.cu");
    CHECK(warnings.empty());
    config.cuda_suffix = "_cuda";  // cunumpy's cuda_suffix="_cuda" reads the file push_cuda
    kernels = find_kernels({tree / "pkg"}, config, warn);
    REQUIRE(kernels.size() == 1);
    CHECK_FALSE(kernels[0].cuda_file);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("push_cuda.cu: not taken as the CUDA kernel") != std::string::npos);
    CHECK(warnings[0].find("set cuda-suffix = \"_cuda.cu\"") != std::string::npos);
    tree.write("pkg/kernels/push/push_cuda", "__global__ void push(double* y) {}\n");
    kernels = find_kernels({tree / "pkg"}, config, warn);
    CHECK(kernels[0].cuda_file == tree / "pkg/kernels/push/push_cuda");
}

TEST_SUITE_END();
