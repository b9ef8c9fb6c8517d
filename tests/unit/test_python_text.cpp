// Python source as Python reads it: a UTF-8 byte order mark, a PEP 263 coding
// line, CRLF and CR line ends. Each reader (signatures, module bindings,
// imports) sees the same text the interpreter would.
#include "host/python_imports.hpp"
#include "signatures/python_bindings.hpp"
#include "signatures/signatures.hpp"
#include "source/python_text.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("python_text");

using namespace ck;
using signatures::PythonText;

namespace {

const std::string bom = "\xEF\xBB\xBF";
const std::string module = "import numpy as np\n\ndef push(x: 'float[:]', n: int = 3):\n    pass\n";

std::string crlf(const std::string& text)
{
    std::string out;
    for (char c : text) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
    return out;
}

std::string cr(std::string text)
{
    for (auto& c : text) c = c == '\n' ? '\r' : c;
    return text;
}

// Each spelling of one module that Python reads as the same text.
std::vector<std::pair<const char*, std::string>> spellings()
{
    return {
        {"a byte order mark", bom + module},
        {"CRLF line ends", crlf(module)},
        {"CR line ends", cr(module)},
        {"a byte order mark and CRLF", bom + crlf(module)},
        {"a latin-1 coding line", "# -*- coding: latin-1 -*-\n" + module},
        {"a coding line on the second line", "#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-1 :\n" + module},
        {"a utf-8 coding line", "# coding=utf-8\n" + module},
    };
}

}  // namespace

TEST_CASE("every spelling of a module is read as the same function, at the same line")
{
    for (const auto& [what, bytes] : spellings()) {
        CAPTURE(what);
        SignatureRead r = read_python_signature(bytes, "push");
        REQUIRE(r.status == SignatureRead::Status::found);
        CHECK(r.parameters == std::vector<std::string>{"x", "n"});
        bool has_coding_line = bytes.find("coding") != std::string::npos;
        bool second_line = bytes.find("vim:") != std::string::npos;
        CHECK(r.line == 3 + (has_coding_line ? 1 : 0) + (second_line ? 1 : 0));
        CHECK(signatures::python_module_binds(bytes, "push"));
        auto imports = scan_python_imports(bytes);
        REQUIRE(imports.size() == 1);
        CHECK(imports[0].module == "numpy");
    }
}

TEST_CASE("a latin-1 module is decoded to UTF-8, names and strings alike")
{
    std::string bytes = "# -*- coding: latin-1 -*-\ndef pouss\xE9(x, y='\xE9t\xE9'):\n    pass\n";
    PythonText text(bytes);
    CHECK(text.coding() == "latin-1");
    CHECK(text.text() == "# -*- coding: latin-1 -*-\ndef pouss\xC3\xA9(x, y='\xC3\xA9t\xC3\xA9'):\n    pass\n");
    SignatureRead r = read_python_signature(bytes, "pouss\xC3\xA9");
    REQUIRE(r.status == SignatureRead::Status::found);
    CHECK(r.parameters == std::vector<std::string>{"x", "y"});
}

TEST_CASE("a coding declaration counts only where PEP 263 says")
{
    CHECK(signatures::python_coding("# coding: latin-1\n") == "latin-1");
    CHECK(signatures::python_coding("#!/bin/python\n# -*- coding: cp1252 -*-\n") == "cp1252");
    CHECK(signatures::python_coding(bom + "# coding=latin_1\n") == "latin_1");
    CHECK(signatures::python_coding("import os\n# coding: latin-1\n").empty());  // second line after code
    CHECK(signatures::python_coding("x = 1  # coding: latin-1\n").empty());      // not a comment line
    CHECK(signatures::python_coding("\n\n# coding: latin-1\n").empty());         // third line
    CHECK(signatures::python_coding("# nothing here\n").empty());
}

TEST_CASE("text that needs no change is viewed, not copied; a coding iconv does not know leaves the bytes")
{
    std::string plain = module;
    PythonText text(plain);
    CHECK(text.text().data() == plain.data());
    std::string unknown = "# coding: no-such-coding\ndef push(x): pass\n";
    CHECK(PythonText(unknown).text() == unknown);
    std::string not_latin = "# coding: ascii\ndef push(x='\xE9'): pass\n";  // not ASCII: left as it is
    CHECK(PythonText(not_latin).text() == not_latin);
}
TEST_SUITE_END();
