#include "source/cpp_lexer.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace ck::signatures;
using Kind = CppToken::Kind;

namespace {

void require_same(const std::vector<CppToken>& a, const std::vector<CppToken>& b)
{
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CAPTURE(i);
        CHECK(a[i].kind == b[i].kind);
        CHECK(a[i].text == b[i].text);
        CHECK(a[i].line == b[i].line);
        CHECK(a[i].glued == b[i].glued);
    }
}

const char* const sources[] = {
    "#include \"a.cuh\"\n#include <b/c.h>\n__global__ void k(double* x) {}\n",
    "/* #include \"hidden.cuh\" */\nconst char* s = \"#include <fake.h>\";\n#include \"real.cuh\"\n",
    "#define LONG(a, b) \\\n  a + \\\n  b\n#if __has_include(\"opt.cuh\")\n#  include \"opt.cuh\"\n#endif\n",
    "auto r = R\"x(\n#include \"in_raw.cuh\"\n)x\";\n#include \"after_raw.cuh\"",
    "int a; // comment \\\n#include \"continued_comment.cuh\"\n#pragma once\r\n#include \"crlf.cuh\"\r\n",
    "#define X 1 \\\n",
    "",
    "#",
};

}  // namespace

TEST_SUITE_BEGIN("cpp_lexer");

TEST_CASE("a directives-only lex is the directive part of the full lex, lines and glue included")
{
    for (const char* source : sources) {
        CAPTURE(source);
        require_same(lex_cpp(source, LexScope::directives), directive_tokens(lex_cpp(source)));
    }
}

TEST_CASE("the same holds for every file of the signature corpus")
{
    // The fuzzers' seed corpus and every input that once failed a reader.
    const char* dir = std::getenv("CK_FUZZ_DIR");
    REQUIRE_MESSAGE(dir != nullptr, "CK_FUZZ_DIR (set by meson test) names tests/fuzz");
    int files = 0;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::filesystem::path(dir) / "corpus" / "cuda")) {
        if (!entry.is_regular_file()) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        CAPTURE(entry.path().string());
        require_same(lex_cpp(text.str(), LexScope::directives), directive_tokens(lex_cpp(text.str())));
        ++files;
    }
    CHECK(files > 0);
}

TEST_CASE("lines are physical lines: continuations and CRLF count, comments and strings hide directives")
{
    auto tokens = lex_cpp(sources[1], LexScope::directives);
    REQUIRE(tokens.size() == 3);
    CHECK(tokens[0].text == "include");
    CHECK(tokens[0].line == 3);
    CHECK(tokens[1].kind == Kind::header_name);
    CHECK(tokens[1].text == "\"real.cuh\"");

    tokens = lex_cpp(sources[2], LexScope::directives);
    REQUIRE(!tokens.empty());
    CHECK(tokens[0].text == "define");
    auto include = std::find_if(tokens.begin(), tokens.end(), [](const CppToken& t) { return t.text == "include"; });
    REQUIRE(include != tokens.end());
    CHECK(include->line == 5);

    tokens = lex_cpp(sources[4], LexScope::directives);
    REQUIRE(tokens.size() == 6);  // the comment's continuation swallows the first #include
    CHECK(tokens[0].text == "pragma");
    CHECK(tokens[0].line == 3);
    CHECK(tokens[3].text == "include");
    CHECK(tokens[4].text == "\"crlf.cuh\"");
    CHECK(tokens[4].line == 4);
}

TEST_SUITE_END();
