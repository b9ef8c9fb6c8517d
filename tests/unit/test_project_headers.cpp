// Object-like macros of the project headers a CUDA source includes: the
// include path the build searches, bounded, never throwing.
#include "signatures/cuda_signature_reader.hpp"
#include "source/project_headers.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("project_headers");

using namespace ck;
using namespace ck::signatures;
using Status = SignatureRead::Status;
using Names = std::vector<std::string>;

namespace {

struct Tree {
    test::TempTree tree;
    std::filesystem::path cuda = tree / "src/sim/kernels/push/push_cuda.cu";

    SignatureRead read(const std::string& source, std::vector<std::filesystem::path> dirs = {})
    {
        tree.write("src/sim/kernels/push/push_cuda.cu", source);
        if (dirs.empty()) dirs = {tree / "src/sim/kernels/push", tree / "src"};
        ProjectHeaders headers(cuda, dirs);
        return read_cuda_signature_with(source, "push", &headers);
    }
};

}  // namespace

TEST_CASE_FIXTURE(Tree, "a KERNEL macro of a project header reads as the compiler reads it")
{
    tree.write("src/sim/kernels/push/common.cuh",
               "#pragma once\n#ifndef COMMON_CUH\n#define COMMON_CUH\n#define KERNEL extern \"C\" __global__\n"
               "#define RESTRICT __restrict__\n#endif\n");
    SignatureRead r = read("#include \"common.cuh\"\nKERNEL void push(double* RESTRICT x, int n) {}\n");
    INFO(r.reason);
    REQUIRE(r.status == Status::found);
    CHECK(r.parameters == Names{"x", "n"});
    CHECK(r.line == 2);
    // Without the headers: not read, as before.
    CHECK(read_cuda_signature("#include \"common.cuh\"\nKERNEL void push(double* x, int n) {}\n", "push").status ==
          Status::not_found);
}

TEST_CASE_FIXTURE(Tree, "headers are found on the include path and through nested includes, relative to the includer")
{
    tree.write("src/sim/macros/kernel.cuh", "#include \"detail/qualifiers.cuh\"\n#define KERNEL EXTERN_C __global__\n");
    tree.write("src/sim/macros/detail/qualifiers.cuh", "#define EXTERN_C extern \"C\"\n");
    SignatureRead r = read("#include <sim/macros/kernel.cuh>\nKERNEL void push(double* x) {}\n");
    INFO(r.reason);
    REQUIRE(r.status == Status::found);
    CHECK(r.parameters == Names{"x"});
    // A configured include folder (KernelSource::include_dirs) is searched too.
    tree.write("include/k.cuh", "#define KERNEL __global__\n");
    r = read("#include \"k.cuh\"\nKERNEL void push(double* y) {}\n", {tree / "src", tree / "include"});
    CHECK(r.parameters == Names{"y"});
}

TEST_CASE_FIXTURE(Tree, "only directives count: a header's declarations and unbalanced groups do not reach the file")
{
    tree.write("src/sim/kernels/push/decl.cuh",
               "#define KERNEL __global__\n__global__ void push(double* other, int names);\n#endif\n#endif\n#if 1\n");
    SignatureRead r = read("#ifdef SOMETHING\n#include \"decl.cuh\"\n#endif\nKERNEL void push(double* x, int n) {}\n");
    INFO(r.reason);
    REQUIRE(r.status == Status::found);
    CHECK(r.parameters == Names{"x", "n"});
}

TEST_CASE_FIXTURE(Tree, "cycles, self-includes and missing or system headers end quietly")
{
    tree.write("src/sim/kernels/push/a.cuh", "#include \"b.cuh\"\n#define A 1\n");
    tree.write("src/sim/kernels/push/b.cuh", "#include \"a.cuh\"\n#include \"b.cuh\"\n#define KERNEL __global__\n");
    SignatureRead r = read(
        "#include \"a.cuh\"\n#include <cstdio>\n#include \"absent.cuh\"\n#include \"/etc/passwd\"\n"
        "KERNEL void push(double* x) {}\n");
    REQUIRE(r.status == Status::found);
    CHECK(r.parameters == Names{"x"});
}

TEST_CASE_FIXTURE(Tree, "a function-like macro of a header is named with its file")
{
    tree.write("src/sim/kernels/push/gen.cuh",
               "\n#define DECLARE(name) extern \"C\" __global__ void name(double* x)\n");
    SignatureRead r = read("#include \"gen.cuh\"\nDECLARE(push) {}\n");
    CHECK(r.status == Status::unreadable);
    CHECK(r.reason.find("function-like macro DECLARE (defined at gen.cuh:2)") != std::string::npos);
}

TEST_CASE_FIXTURE(Tree, "depth, count and size are bounded")
{
    // A chain deeper than the preprocessor follows: the macro at its end is not seen.
    for (int i = 0; i < 40; ++i)
        tree.write("src/sim/kernels/push/h" + std::to_string(i) + ".cuh",
                   "#include \"h" + std::to_string(i + 1) + ".cuh\"\n");
    tree.write("src/sim/kernels/push/h40.cuh", "#define KERNEL __global__\n");
    CHECK(read("#include \"h0.cuh\"\nKERNEL void push(double* x) {}\n").status == Status::not_found);
    // Many headers: at most max_headers are opened.
    std::string many;
    for (int i = 0; i < 100; ++i) {
        tree.write("src/sim/kernels/push/m" + std::to_string(i) + ".cuh", "#define M" + std::to_string(i) + " 1\n");
        many += "#include \"m" + std::to_string(i) + ".cuh\"\n";
    }
    ProjectHeaders headers(cuda, {tree / "src"});
    int opened = 0;
    for (int i = 0; i < 100; ++i)
        if (headers.open("\"m" + std::to_string(i) + ".cuh\"", {})) ++opened;
    CHECK(opened == static_cast<int>(ProjectHeaders::max_headers));
    tree.write("src/sim/kernels/push/big.cuh", std::string(ProjectHeaders::max_bytes + 1, ' '));
    ProjectHeaders fresh(cuda, {});
    CHECK_FALSE(fresh.open("\"big.cuh\"", {}));
    CHECK(read(many + "__global__ void push(double* x) {}\n").parameters == Names{"x"});
}

TEST_CASE_FIXTURE(Tree, "a header cache reads and lexes a header once for every reading that shares it")
{
    tree.write("src/sim/kernels/push/common.cuh",
               "#define KERNEL extern \"C\" __global__\n#define RESTRICT __restrict__\n");
    std::string source = "#include \"common.cuh\"\nKERNEL void push(double* RESTRICT x, int n) {}\n";
    tree.write("src/sim/kernels/push/push_cuda.cu", source);
    std::vector<std::filesystem::path> dirs = {tree / "src/sim/kernels/push", tree / "src"};
    HeaderCache cache;
    ProjectHeaders first(cuda, dirs, &cache), second(cuda, dirs, &cache);
    auto a = first.open("\"common.cuh\"", {});
    auto b = second.open("<common.cuh>", {});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->path == b->path);
    REQUIRE(a->directives);
    CHECK(a->directives == b->directives);  // lexed once, shared
    auto lexed = lex_cpp(a->text, LexScope::directives);
    REQUIRE(a->directives->size() == lexed.size());
    for (std::size_t i = 0; i < lexed.size(); ++i) {
        CHECK((*a->directives)[i].text == lexed[i].text);
        CHECK((*a->directives)[i].line == lexed[i].line);
    }
    // Readings through the cache read as readings without one.
    for (int i = 0; i < 2; ++i) {
        ProjectHeaders headers(cuda, dirs, &cache);
        SignatureRead r = read_cuda_signature_with(source, "push", &headers);
        REQUIRE(r.status == Status::found);
        CHECK(r.parameters == Names{"x", "n"});
    }
    CHECK(read(source).parameters == Names{"x", "n"});
    // A header is taken as first read for the cache's life; a new cache reads it again.
    tree.write("src/sim/kernels/push/common.cuh", "#define KERNEL __global__\n");
    CHECK(ProjectHeaders(cuda, dirs, &cache).open("\"common.cuh\"", {})->text.find("extern") != std::string::npos);
    HeaderCache fresh;
    CHECK(ProjectHeaders(cuda, dirs, &fresh).open("\"common.cuh\"", {})->text == "#define KERNEL __global__\n");
    // The bounds count per reading, cached or not.
    ProjectHeaders bounded(cuda, dirs, &cache);
    for (std::size_t i = 0; i < ProjectHeaders::max_headers; ++i) REQUIRE(bounded.open("\"common.cuh\"", {}));
    CHECK_FALSE(bounded.open("\"common.cuh\"", {}));
}

TEST_CASE_FIXTURE(Tree, "header caches that share their lexing read each header afresh and lex each text once")
{
    std::vector<std::filesystem::path> dirs = {tree / "src/sim/kernels/push", tree / "src"};
    tree.write("src/sim/kernels/push/common.cuh", "#define KERNEL extern \"C\" __global__\n");
    LexedTexts lexed;
    HeaderCache first(&lexed), second(&lexed);
    auto a = ProjectHeaders(cuda, dirs, &first).open("\"common.cuh\"", {});
    auto b = ProjectHeaders(cuda, dirs, &second).open("\"common.cuh\"", {});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->directives == b->directives);  // one lexing for the same text
    // An edit between two readings is seen: the text is read by each cache, and its tokens are its own.
    tree.write("src/sim/kernels/push/common.cuh", "#define KERNEL __global__\n");
    HeaderCache third(&lexed);
    auto c = ProjectHeaders(cuda, dirs, &third).open("\"common.cuh\"", {});
    REQUIRE(c);
    CHECK(c->text == "#define KERNEL __global__\n");
    CHECK(c->directives != a->directives);
    std::string source = "#include \"common.cuh\"\nKERNEL void push(double* x) {}\n";
    ProjectHeaders headers(cuda, dirs, &third);
    CHECK(read_cuda_signature_with(source, "push", &headers).parameters == Names{"x"});
    CHECK(lexed.directives("#define KERNEL __global__\n") == c->directives);
}

TEST_SUITE_END();
