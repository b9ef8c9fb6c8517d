// The struct layout reader against the compiler: every construct with a
// clear C layout is laid out as g++ lays it out (sizeof, alignof, offsetof
// of a program compiled here), and every construct it cannot lay out is a
// problem naming the header's line, never a struct silently left out.
#include "cunumpy_kernels/error.hpp"
#include "struct_headers/header_preprocessor.hpp"
#include "struct_headers/struct_layouts.hpp"
#include "struct_headers/struct_reader.hpp"
#include "temp_tree.hpp"
#include "util/subprocess.hpp"

#include <doctest/doctest.h>

#include <map>
#include <sstream>

TEST_SUITE_BEGIN("struct_reader");

using namespace ck;

namespace {

StructReading read(const std::string& text)
{
    return read_structs(signatures::lex_cpp(text), [](int line) { return "h.cuh:" + std::to_string(line); });
}

// Each struct's "size align" and each member's offset, as g++ computes them
// for `header` compiled into a program that prints them.
std::map<std::string, std::string> compiled_layouts(const std::string& header, const StructReading& reading)
{
    test::TempTree tree;
    tree.write("h.hpp", header);
    std::string program = "#include <cstddef>\n#include <cstdio>\n#include \"h.hpp\"\nint main() {\n";
    for (const auto& s : reading.structs) {
        program += "std::printf(\"" + s.qualified + " %zu %zu\\n\", sizeof(" + s.qualified + "), alignof(" +
                   s.qualified + "));\n";
        for (const auto& [member, offset] : s.offsets)
            program += "std::printf(\"" + s.qualified + "." + member + " %zu\\n\", offsetof(" + s.qualified + ", " +
                       member + "));\n";
    }
    tree.write("main.cpp", program + "}\n");
    auto compiler = util::find_in_path("c++");
    REQUIRE_MESSAGE(!compiler.empty(), "the comparison needs the host C++ compiler");
    auto built = util::run_process(
        {compiler.string(), "-std=c++17", "-w", "-o", (tree / "main").string(), (tree / "main.cpp").string()});
    REQUIRE_MESSAGE(built.exit_code == 0, built.output);
    auto ran = util::run_process({(tree / "main").string()});
    REQUIRE(ran.exit_code == 0);
    std::map<std::string, std::string> layouts;
    std::istringstream lines(ran.output);
    for (std::string name, rest; lines >> name && std::getline(lines, rest);) layouts[name] = rest.substr(1);
    return layouts;
}

std::map<std::string, std::string> read_layouts(const StructReading& reading)
{
    std::map<std::string, std::string> layouts;
    for (const auto& s : reading.structs) {
        layouts[s.qualified] = std::to_string(s.layout.size) + " " + std::to_string(s.layout.alignment);
        for (const auto& [member, offset] : s.offsets) layouts[s.qualified + "." + member] = std::to_string(offset);
    }
    return layouts;
}

// Every construct of the trial that has a clear C layout.
const char* const clear_layouts = R"(#pragma once
#include <cstdint>
struct Arrays { float a[3]; double m[3][3]; char tag[5]; };
struct Aligned { char c; alignas(16) double x; int n; };
struct alignas(32) WholeAligned { int n; };
struct CudaAligned { char c; double d __attribute__((aligned(16))); };
enum Color { red, green, blue };
enum class Small : std::uint8_t { a, b };
enum class Scoped { x, y };
enum Wide : long long { big = 1 };
struct Enums { char c; Color color; Small small; Scoped scoped; enum Color again; Wide wide; char tail; };
struct Several { int a, b; int *p, q; double x, *y, z[2]; };
struct Defaults { int a = 0; int b{1}; double c = 2.5, d{3}; int e[2] = {1, 2}; };
namespace sim { namespace inner { struct Spaced { char c; long long n; }; } }
typedef struct Named { char c; double d; } Named;
typedef struct { short s; char c; } Anonymous;
typedef struct Tagged { int n; } Alias, *AliasPointer;
struct UsesEarlier { char c; Named named; Anonymous anonymous[2]; sim::inner::Spaced spaced; };
struct Outer { struct Inner { char c; double d; } inner; int n; };
struct WithUnion { char c; union { int i; double d; }; struct { char x; short y; }; int tail; };
union Plain { char c[3]; int i; };
struct CvQualified { const int a; volatile double b; const volatile char c; const char* const name; };
struct Spellings { unsigned long long a; long long int b; unsigned char c; signed short d; unsigned e;
                   std::int64_t g; int64_t h; std::int32_t i; uint16_t j; std::size_t k; bool l; };
struct Pointers { double** pp; int*** ppp; void* v; const char* const* names; struct Named* named; };
struct Methods { int n; __host__ __device__ int twice() const { return 2 * n; } static constexpr int k = 3;
                 static int shared; Methods() = default; double x; };
struct Empty {};
struct alignas(32) AlignedEmpty {};
)";

}  // namespace

TEST_CASE("every construct with a clear C layout is laid out as g++ lays it out")
{
    std::string header = std::string("#define __host__\n#define __device__\n") + clear_layouts;
    StructReading reading = read(clear_layouts);
    for (const auto& problem : reading.problems) INFO(problem.message());
    CHECK(reading.problems.empty());
    std::map<std::string, std::string> read = read_layouts(reading);
    std::map<std::string, std::string> compiled = compiled_layouts(header, reading);
    for (const char* name : {"Arrays",      "Aligned",      "WholeAligned", "CudaAligned",
                             "Enums",       "Several",      "Defaults",     "sim::inner::Spaced",
                             "Named",       "Anonymous",    "Alias",        "UsesEarlier",
                             "Outer",       "Outer::Inner", "WithUnion",    "Plain",
                             "CvQualified", "Spellings",    "Pointers",     "Methods",
                             "Empty",       "AlignedEmpty"}) {
        INFO(name);
        CHECK(read.count(name) == 1);
    }
    CHECK(read.size() == compiled.size());
    for (const auto& [name, layout] : compiled) {
        INFO(name);
        CHECK(read[name] == layout);
    }
    CHECK(read["Arrays"] == "96 8");  // by hand: 12, 4 of padding, 72, 5, 3 of padding
    CHECK(read["WithUnion.d"] == "8");
}

TEST_CASE("what the reader cannot lay out is a problem naming the header's line and the construct")
{
    struct Case {
        const char* text;
        int line;
        const char* says;
    };
    const Case cases[] = {
        {"template <typename T>\nstruct Box { T value; };\n", 2, "template struct Box"},
        {"struct Flags {\n  unsigned a : 3;\n  unsigned b : 5; };\n", 2, "member 'a' is a bit-field"},
        {"struct Base { int n; };\nstruct Derived : Base { int m; };\n", 2, "struct Derived: a base class"},
        {"struct V {\n  virtual void f();\n  int n; };\n", 2, "a virtual function"},
        {"struct P { char c; int n; } __attribute__((packed));\n", 1, "struct P: a packed layout"},
        {"struct __attribute__((packed)) P2 { char c; int n; };\n", 1, "struct P2: a packed layout"},
        {"#pragma pack(push, 1)\nstruct Q { char c; int n; };\n", 1, "#pragma pack"},
        {"struct U {\n  Mystery m; };\n", 2, "unknown type 'Mystery'"},
        {"struct U { double x;\n  float3 v; };\n", 2, "unknown type 'float3'"},
        {"struct L {\n  long double x; };\n", 2, "unknown type 'long double'"},
        {"constexpr int N = 3;\nstruct A {\n  double a[N]; };\n", 3, "an array bound that is not a number"},
        {"struct R {\n  int& n; };\n", 2, "a reference member"},
        {"struct F {\n  double (*f)(double); };\n", 2, "function pointer"},
        {"struct In { Later l; };\nstruct Later { int n; };\n", 1, "unknown type 'Later'"},
        {"struct Holds { int n;\n  struct { unsigned bits : 4; } packed; };\n", 2, "bit-field"},
        {"struct A { alignas(N) double x; };\n", 1, "alignas(...) of an alignment that is not a number"},
    };
    for (const auto& c : cases) {
        INFO(c.text);
        StructReading reading = read(c.text);
        REQUIRE(!reading.problems.empty());
        CHECK(reading.problems.front().where == "h.cuh:" + std::to_string(c.line));
        CHECK(reading.problems.front().message().find(c.says) != std::string::npos);
    }
    // A struct with a member of a struct that cannot be laid out cannot be laid out either; it says why.
    StructReading nested = read("struct Flags { unsigned a : 3; };\nstruct User { Flags f; int n; };\n");
    CHECK(nested.structs.empty());
    REQUIRE(nested.problems.size() == 2);
    CHECK(nested.problems[1].message().find("its type Flags cannot be laid out") != std::string::npos);
}

TEST_CASE("a header's conditional compilation is decided with the kernels' defines, lines kept")
{
    test::TempTree tree;
    const std::string text =
        "#ifndef ARGS_CUH\n#define ARGS_CUH\n#include <cstdint>\n"
        "#ifdef USE_FLOAT\ntypedef float real;\n#else\ntypedef double real;\n#endif\n"
        "struct Args {\n  real x;\n  int n;\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n  long long wide;\n#else\n  int narrow;\n#endif\n};\n"
        "#if SIZE > 2\nstruct Bad { int b : 1; };\n#endif\n#endif\n";
    auto header = tree.write("args.cuh", text);
    Config config;
    config.architectures = {"sm_90"};
    StructReading doubled = read_header_structs(text, header, config);
    REQUIRE(doubled.structs.size() == 1);
    CHECK(doubled.structs[0].layout.size == 24);  // double, int, long long
    CHECK(doubled.problems.empty());
    config.options = {"-DUSE_FLOAT", "-DSIZE=3"};
    StructReading floated = read_header_structs(text, header, config);
    REQUIRE(floated.structs.size() == 1);
    CHECK(floated.structs[0].layout.size == 16);  // float, int, long long
    REQUIRE(floated.problems.size() == 1);
    CHECK(floated.problems[0].where == header.string() + ":19");  // the line in the header, through the markers
    config.options = {"-U", "USE_FLOAT"};
    config.architectures = {"sm_70"};
    StructReading older = read_header_structs(text, header, config);
    CHECK(older.structs.at(0).layout.size == 16);  // double, int, int
}

TEST_CASE("only a header with conditionals or macros beyond its include guard needs the preprocessor")
{
    auto needs = [](const std::string& text) { return needs_preprocessor(signatures::lex_cpp(text)); };
    CHECK_FALSE(needs("struct A { int n; };\n"));
    CHECK_FALSE(needs("#pragma once\n#include <cstdint>\nstruct A { int n; };\n"));
    CHECK_FALSE(needs("#ifndef A_H\n#define A_H\n#include <cstdint>\nstruct A { int n; };\n#endif\n"));
    CHECK(needs("#ifndef A_H\n#define A_H\n#ifdef F\nstruct A { float n; };\n#endif\n#endif\n"));
    CHECK(needs("#ifndef A_H\n#define A_H\n#define N 3\nstruct A { int n[N]; };\n#endif\n"));
    CHECK(needs("#if 0\nstruct A { int n; };\n#endif\n"));
    CHECK(needs("#ifndef A_H\n#define B_H\nstruct A { int n; };\n#endif\n"));
    Config config;
    config.options = {"-DNDEBUG", "-D", "WIDTH=4", "-UFOO", "--define-macro=BAR", "-O3"};
    config.compiler = CudaCompilerKind::nvcc;
    config.architectures = {"sm_90a"};
    CHECK(preprocessor_defines(config) == std::vector<std::string>{"-D__CUDACC__", "-D__NVCC__", "-D__CUDA_ARCH__=900",
                                                                   "-DNDEBUG", "-DWIDTH=4", "-UFOO", "-DBAR"});
}

TEST_SUITE_END();
