#include "host/python_imports.hpp"

#include "source/python_lexer.hpp"
#include "source/python_text.hpp"

#include <algorithm>
#include <string_view>

#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

using signatures::PythonToken;
using Tokens = std::vector<PythonToken>;

bool is_op(const PythonToken& token, std::string_view text)
{
    return token.kind == PythonToken::Kind::op && token.text == text;
}

bool is_name(const PythonToken& token, std::string_view text)
{
    return token.kind == PythonToken::Kind::name && token.text == text;
}

// Where the simple statement that starts at `at` ends: its newline or `;`.
std::size_t statement_end(const Tokens& tokens, std::size_t at)
{
    while (at < tokens.size() && tokens[at].kind != PythonToken::Kind::newline && !is_op(tokens[at], ";")) ++at;
    return at;
}

// `a.b.c` from `at` on; "" when no name starts there. `at` moves past it.
std::string dotted_name(const Tokens& tokens, std::size_t& at, std::size_t end)
{
    std::string name;
    while (at < end && tokens[at].kind == PythonToken::Kind::name) {
        name += tokens[at++].text;
        if (at + 1 >= end || !is_op(tokens[at], ".") || tokens[at + 1].kind != PythonToken::Kind::name) break;
        name += '.';
        ++at;
    }
    return name;
}

// `import a.b as x, c` names a.b and c; a part that is no dotted name is skipped.
void read_import(const Tokens& tokens, std::size_t at, std::size_t end, std::vector<PythonImport>& imports)
{
    int line = tokens[at - 1].line;
    while (at < end) {
        std::string name = dotted_name(tokens, at, end);
        if (at + 1 < end && is_name(tokens[at], "as") && tokens[at + 1].kind == PythonToken::Kind::name) at += 2;
        if (!name.empty() && (at == end || is_op(tokens[at], ","))) imports.push_back({name, line});
        while (at < end && !is_op(tokens[at], ",")) ++at;
        ++at;
    }
}

// `from ..a.b import x` names ..a.b; `from . import x` names `.`.
void read_from(const Tokens& tokens, std::size_t at, std::size_t end, std::vector<PythonImport>& imports)
{
    int line = tokens[at - 1].line;
    std::string module;
    while (at < end && (is_op(tokens[at], ".") || is_op(tokens[at], "..."))) module += tokens[at++].text;
    if (at < end && !is_name(tokens[at], "import")) module += dotted_name(tokens, at, end);
    if (!module.empty() && at + 1 < end && is_name(tokens[at], "import")) imports.push_back({module, line});
}

// `<base>/a/b/c.py` for `a.b.c`. The scanner admits only dotted identifiers,
// so the file stays below `base`.
fs::path module_file(const fs::path& base, const std::string& dotted)
{
    std::string relative = dotted;
    std::replace(relative.begin(), relative.end(), '.', '/');
    return base / (relative + ".py");
}

bool is_python_file(const fs::path& file)
{
    std::error_code error;
    return fs::is_regular_file(file, error);
}

bool is_inside(const fs::path& file, const fs::path& root)
{
    auto relative = file.lexically_normal().lexically_relative(root.lexically_normal());
    return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

std::vector<PythonImport> scan_python_imports(const std::string& source)
{
    // Python's own tokenizer rules (lib/signatures' fuzzed lexer): comments,
    // strings and docstrings holding example imports never count.
    signatures::PythonText text(source);  // a BOM, a coding line, CRLF: as Python reads it
    Tokens tokens = signatures::lex_python(text.text());
    std::vector<PythonImport> imports;
    for (std::size_t at = 0; at < tokens.size();) {
        std::size_t end = statement_end(tokens, at);
        if (is_name(tokens[at], "import")) read_import(tokens, at + 1, end, imports);
        if (is_name(tokens[at], "from")) read_from(tokens, at + 1, end, imports);
        at = end + 1;
    }
    return imports;
}

namespace {

// Libraries Pyccel translates itself and never compiles as user modules
// (pyccel/ast/utilities.py, builtin_import_registry): an installed package
// whose source root is site-packages finds pyccel/decorators.py there.
bool is_pyccel_library(const std::string& module)
{
    static const std::set<std::string> libraries = {"numpy", "scipy", "pyccel", "itertools",
                                                    "cmath", "math",  "sys",    "typing"};
    return libraries.count(module.substr(0, module.find('.'))) > 0;
}

}  // namespace

std::optional<fs::path> resolve_python_import(const std::string& module, const fs::path& importer,
                                              const fs::path& source_root,
                                              const std::function<bool(const fs::path&)>& is_file)
{
    std::vector<fs::path> candidates;
    fs::path folder = importer.parent_path();
    if (!module.empty() && module[0] == '.') {
        std::size_t depth = module.find_first_not_of('.');
        if (depth == std::string::npos) return std::nullopt;  // `from . import x`: a package, not a module
        for (std::size_t up = 1; up < depth; ++up) folder = folder.parent_path();
        if (!is_inside(folder / "x", source_root)) return std::nullopt;
        candidates.push_back(module_file(folder, module.substr(depth)));
    } else {
        if (is_pyccel_library(module)) return std::nullopt;
        candidates.push_back(module_file(folder, module));
        candidates.push_back(module_file(source_root, module));
    }
    for (const auto& candidate : candidates)
        if (is_file ? is_file(candidate) : is_python_file(candidate)) return candidate.lexically_normal();
    return std::nullopt;
}

std::string python_module_name(const fs::path& file, const fs::path& source_root)
{
    fs::path relative = file.lexically_normal().lexically_relative(source_root.lexically_normal());
    relative.replace_extension();
    std::string name;
    for (const auto& part : relative) name += (name.empty() ? "" : ".") + part.string();
    return name;
}

}  // namespace ck
