#include "cunumpy_kernels/error.hpp"
#include "status/signature_report.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <atomic>

TEST_SUITE_BEGIN("signature_check");

using namespace ck;
namespace fs = std::filesystem;
using Kind = SignatureFinding::Kind;

namespace {

KernelSignatures check(const fs::path& folder)
{
    auto kernels = find_kernels({folder}, Config{});
    REQUIRE(kernels.size() == 1);
    return check_kernel_signatures(kernels[0], Config{});
}

}  // namespace

TEST_CASE("the guide's example message, with both declarations located")
{
    test::TempTree tree;
    tree.write("pkg/__init__.py", "");
    tree.write("pkg/push/push_kernels.py", "import numpy\n\n\ndef push(x, v, dt, n):\n    pass\n");
    tree.write("pkg/push/push_cuda.cu", "// push\n__global__ void push(double* x, double* v, int n, double dt) {}\n");
    KernelSignatures result = check(tree / "pkg/push");
    REQUIRE(result.findings.size() == 1);
    const SignatureFinding& finding = result.findings[0];
    CHECK(finding.kind == Kind::mismatch);
    CHECK(finding.message == "kernel 'push': the host kernel takes (x, v, dt, n), the CUDA kernel (x, v, n, dt)");
    REQUIRE(finding.declarations.size() == 2);
    CHECK(finding.declarations[0].file == tree / "pkg/push/push_kernels.py");
    CHECK(finding.declarations[0].read.line == 4);
    CHECK(finding.declarations[1].file == tree / "pkg/push/push_cuda.cu");
    CHECK(finding.declarations[1].read.line == 2);
    CHECK(result.agreement() == SignatureAgreement::mismatch);
}

TEST_CASE("every implementation and the Pyccel stub are compared, and every mismatch is listed")
{
    test::TempTree tree;
    tree.write("pkg/push/push_kernels.py", "def push(x, v, dt):\n    pass\n");
    tree.write("pkg/push/push_numba.py", "import numba\n\n@numba.njit(cache=True)\ndef push(x, dt, v):\n    pass\n");
    tree.write("pkg/push/push_numpy.py", "def push(x, v, dt, *, out=None):\n    pass\n");
    tree.write("pkg/push/__pyccel__/push_kernels.pyi", "def push(x : 'float[:]', v : 'float[:]') -> None:\n    ...\n");
    tree.write("pkg/push/push_cuda.cu", "__global__ void push(double* x, double* w, double dt) {}\n");
    KernelSignatures result = check(tree / "pkg/push");
    std::vector<std::string> messages;
    for (const auto& f : result.findings) messages.push_back(f.message);
    CHECK(messages == std::vector<std::string>{
                          "kernel 'push': the host kernel takes (x, v, dt), the CUDA kernel (x, w, dt)",
                          "kernel 'push': the host kernel takes (x, v, dt), the numba version (x, dt, v)",
                          "kernel 'push': the host kernel takes (x, v, dt), the Pyccel stub (x, v)",
                      });
    CHECK(result.declarations.size() == 5);  // host, CUDA, numba, numpy (agrees), stub
}

TEST_CASE("what cannot be read is a finding of its own, and nothing is compared with it")
{
    test::TempTree tree;
    tree.write("pkg/push/push_kernels.py", "def push(x, n):\n    pass\n");
    tree.write("pkg/push/push_cuda.cu", "#define K(name) __global__ void name(double* x, int n)\nK(push) {}\n");
    KernelSignatures result = check(tree / "pkg/push");
    REQUIRE(result.findings.size() == 1);
    CHECK(result.findings[0].kind == Kind::unreadable);
    CHECK(result.findings[0].message.rfind("kernel 'push': cannot read the CUDA kernel: 'push' is declared by the "
                                           "function-like macro K",
                                           0) == 0);
    CHECK(result.findings[0].declarations.at(0).read.line == 2);
    CHECK(result.agreement() == SignatureAgreement::unreadable);
}

TEST_CASE("a kernel with nothing to compare is not read")
{
    test::TempTree tree;
    tree.write("pkg/sort/sort_kernels.py", "def sort(this is not even Python(\n");
    KernelSignatures result = check(tree / "pkg/sort");
    CHECK(result.findings.empty());
    CHECK(result.agreement() == SignatureAgreement::nothing_to_compare);
}

TEST_CASE("a source that cannot be read is reported as an unreadable file")
{
    test::TempTree tree;
    tree.write("pkg/push/push_kernels.py", "def push(x):\n    pass\n");
    auto kernels = find_kernels({tree / "pkg/push"}, Config{});
    REQUIRE(kernels.size() == 1);
    KernelSource kernel = kernels[0];
    kernel.cuda_file = tree / "pkg/push/vanished_cuda.cu";  // removed after the walk
    KernelSignatures result = check_kernel_signatures(kernel, Config{});
    REQUIRE(result.findings.size() == 1);
    CHECK(result.findings[0].kind == Kind::unreadable_file);
    CHECK(result.findings[0].message.find("vanished_cuda.cu") != std::string::npos);
    CHECK(result.agreement() == SignatureAgreement::unreadable);
}

TEST_CASE("paths: folders are walked, files stand for their kernel, other files are skipped")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.write("src/sim/kernels/__init__.py", "");
    tree.kernel("src/sim/kernels", "push", "__global__ void push(double* x, long n) {}\n");
    tree.kernel("src/sim/kernels", "sort");
    tree.write("src/sim/kernels/push/__pyccel__/push_kernels.pyi", "def push(x, n): ...\n");
    tree.write("src/sim/bsplines/__init__.py", "");
    tree.write("src/sim/bsplines/kernels/__init__.py", "");
    tree.write("src/sim/bsplines/bsplines_kernels.py", "def bsplines(): pass\n");
    tree.kernel("src/sim/bsplines/kernels", "eval");
    tree.write("README.md", "");

    auto modules = [](const std::vector<KernelSource>& kernels) {
        std::vector<std::string> names;
        for (const auto& k : kernels) names.push_back(k.module);
        return names;
    };
    CHECK(modules(kernels_of_paths(
              {tree / "src/sim/kernels/push/push_cuda.cu", tree / "src/sim/kernels/push/push_kernels.py",
               tree / "src/sim/kernels/push/__pyccel__/push_kernels.pyi", tree / "src/sim/kernels/sort/sort_kernels.py",
               tree / "README.md", tree / "src/sim/__init__.py"},
              Config{})) == std::vector<std::string>{"sim.kernels.push", "sim.kernels.sort"});
    // bsplines/ holds a kernel package: its module is no kernel
    CHECK(kernels_of_paths({tree / "src/sim/bsplines/bsplines_kernels.py"}, Config{}).empty());
    CHECK(modules(kernels_of_paths({tree / "src"}, Config{})) ==
          std::vector<std::string>{"sim.bsplines.kernels.eval", "sim.kernels.push", "sim.kernels.sort"});
    CHECK_THROWS_AS(kernels_of_paths({tree / "missing.py"}, Config{}), UsageError);
}

TEST_CASE("a declaration cunumpy cannot read is a warning: the kernel still agrees")
{
    test::TempTree tree;
    tree.write("pkg/push/push_kernels.py", "def push(x, n):\n    pass\n");
    tree.write("pkg/push/push_cuda.cu", "__global__ void __launch_bounds__(128) push(double* x, int n) {}\n");
    auto kernels = find_kernels({tree / "pkg/push"}, Config{});
    REQUIRE(kernels.size() == 1);
    KernelSignatures result = check_kernel_signatures(kernels[0], Config{}, [] { return std::string("9.9"); });
    REQUIRE(result.findings.size() == 1);
    const SignatureFinding& finding = result.findings[0];
    CHECK(finding.kind == Kind::cunumpy_unreadable);
    CHECK(finding.severity == SignatureFinding::Severity::warning);
    CHECK(finding.message.find(
              "kernel 'push': cunumpy 9.9 cannot read this declaration: it finds no `__global__ void push(`") == 0);
    CHECK(result.agreement() == SignatureAgreement::match);
    // Without a version, the release the model follows.
    CHECK(check(tree / "pkg/push").findings.at(0).message.find("cunumpy 0.7.1 cannot read") != std::string::npos);
    nlohmann::json report = to_json({result}, [](const fs::path& p) { return p.string(); });
    CHECK(report["ok"] == true);
    CHECK(report["summary"]["warnings"] == 1);
    CHECK(report["findings"][0]["kind"] == "cunumpy-unreadable");
    CHECK(report["findings"][0]["severity"] == "warning");
    // With the template's arguments configured, cunumpy reads a template kernel too.
    tree.write("pkg/push/push_cuda.cu", "template <typename T>\n__global__ void push(T* x, int n) {}\n");
    CHECK(check(tree / "pkg/push").findings.at(0).kind == Kind::cunumpy_unreadable);
    Config config;
    config.template_args["push"] = {"double"};
    CHECK(check_kernel_signatures(kernels[0], config).findings.empty());
}

TEST_CASE("the JSON report lists every kernel and every finding")
{
    test::TempTree tree;
    tree.write("pkg/push/push_kernels.py", "def push(x, n):\n    pass\n");
    tree.write("pkg/push/push_cuda.cu", "__global__ void push(double* x, int m) {}\n");
    auto kernels = find_kernels({tree / "pkg"}, Config{});
    std::vector<KernelSignatures> results;
    for (const auto& k : kernels) results.push_back(check_kernel_signatures(k, Config{}));
    auto j = to_json(results, [](const fs::path& p) { return p.filename().string(); });
    CHECK(j["ok"] == false);
    CHECK(j["summary"]["mismatch"] == 1);
    CHECK(j["findings"][0]["declarations"][1]["file"] == "push_cuda.cu");
    CHECK(j["findings"][0]["declarations"][1]["parameters"] == nlohmann::json({"x", "m"}));
    CHECK(j["kernels"][0]["agreement"] == "mismatch");
}

TEST_CASE("check_signatures on two threads gives each kernel's check, in order, as one thread does")
{
    test::TempTree tree;
    for (int i = 0; i < 24; ++i) {
        std::string name = "k" + std::to_string(i / 10) + std::to_string(i % 10);
        tree.write("pkg/" + name + "/" + name + "_kernels.py", "def " + name + "(x, n):\n    pass\n");
        // Every third kernel disagrees, every fifth cannot be read; all include one header.
        std::string parameters = i % 3 == 0 ? "double* x, int m" : "double* x, int n";
        std::string cuda = "#include \"common.cuh\"\n__global__ void " + name + "(" + parameters + ") {}\n";
        if (i % 5 == 0) cuda = "__global__ void " + name + "(double* x,\n";
        tree.write("pkg/" + name + "/" + name + "_cuda.cu", cuda);
    }
    tree.write("pkg/common.cuh", "#pragma once\n");
    auto kernels = find_kernels({tree / "pkg"}, Config{});
    REQUIRE(kernels.size() == 24);
    std::vector<KernelSignatures> one_thread;
    for (const auto& k : kernels) one_thread.push_back(check_kernel_signatures(k, Config{}));
    auto shown = [](const std::vector<KernelSignatures>& results) {
        return to_json(results, [](const fs::path& p) { return p.filename().string(); }).dump();
    };
    std::atomic<int> asked{0};
    CunumpyVersion version = [&] {
        ++asked;
        return std::string("9.9");
    };
    signatures::HeaderCache headers;
    for (int run = 0; run < 5; ++run) {
        std::vector<KernelSignatures> both = check_signatures(kernels, Config{}, version, &headers);
        REQUIRE(both.size() == kernels.size());
        for (std::size_t i = 0; i < kernels.size(); ++i) CHECK(both[i].module == kernels[i].module);
        CHECK(shown(both) == shown(one_thread));
    }
    CHECK(check_signatures({}, Config{}).empty());
    CHECK(check_signatures({kernels[1]}, Config{}).front().module == kernels[1].module);
}

TEST_SUITE_END();
