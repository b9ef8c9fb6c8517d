#include "signatures/python_bindings.hpp"

#include "source/python_text.hpp"

#include <cctype>
#include <optional>
#include <string>

namespace ck::signatures {

namespace {

using Kind = PythonToken::Kind;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_op(const PythonToken& t, std::string_view text) { return t.kind == Kind::op && t.text == text; }

bool is_name(const PythonToken& t, std::string_view text) { return t.kind == Kind::name && t.text == text; }

// One logical line: tokens [begin, end), `end` being its newline token.
struct Statement {
    std::size_t begin;
    std::size_t end;
};

// A line whose body is a new scope: names bound in it are not the module's.
bool opens_scope(const std::vector<PythonToken>& tokens, const Statement& s)
{
    const PythonToken& first = tokens[s.begin];
    return is_name(first, "def") || is_name(first, "class") || is_op(first, "@") ||
           (is_name(first, "async") && s.begin + 1 < s.end && is_name(tokens[s.begin + 1], "def"));
}

PythonBinding binding_of(PythonBinding::Kind kind, std::size_t name_token)
{
    PythonBinding binding;
    binding.kind = kind;
    binding.name_token = name_token;
    return binding;
}

std::optional<PythonBinding> definition(const std::vector<PythonToken>& tokens, const Statement& s,
                                        std::string_view name)
{
    std::size_t keyword = s.begin + (is_name(tokens[s.begin], "async") ? 1 : 0);
    if (keyword + 1 >= s.end || !is_name(tokens[keyword + 1], name)) return std::nullopt;
    if (is_name(tokens[keyword], "def")) return binding_of(PythonBinding::Kind::def, keyword + 1);
    if (is_name(tokens[keyword], "class") && keyword == s.begin)
        return binding_of(PythonBinding::Kind::class_def, s.begin);
    return std::nullopt;
}

// `import a.b`, `import a as n`, `from m import (a, b as n)`.
bool import_binds(const std::vector<PythonToken>& tokens, const Statement& s, std::string_view name)
{
    bool from = is_name(tokens[s.begin], "from");
    if (!from && !is_name(tokens[s.begin], "import")) return false;
    std::size_t i = s.begin + 1;
    if (from)
        while (i < s.end && !is_name(tokens[i], "import")) ++i;
    bool item_start = true;
    for (++i; i < s.end; ++i) {
        const PythonToken& t = tokens[i];
        if (is_op(t, ",")) item_start = true;
        if (t.kind != Kind::name) continue;
        bool renamed = i + 1 < s.end && is_name(tokens[i + 1], "as");
        bool bound = is_name(tokens[i - 1], "as") || (item_start && !renamed);
        if (item_start) item_start = false;
        if (bound && t.text == name) return true;
    }
    return false;
}

bool opens(const PythonToken& t) { return is_op(t, "(") || is_op(t, "[") || is_op(t, "{"); }

bool closes(const PythonToken& t) { return is_op(t, ")") || is_op(t, "]") || is_op(t, "}"); }

// `a, name` or `(a, name)` or `[name, b]` on the left of `=`: tokens [begin, end).
bool unpacks_into(const std::vector<PythonToken>& tokens, std::size_t begin, std::size_t end, std::string_view name)
{
    int outer = opens(tokens[begin]) ? 1 : 0;
    int depth = 0;
    for (std::size_t i = begin; i < end; ++i) {
        if (opens(tokens[i])) ++depth;
        if (closes(tokens[i]) && depth > 0) --depth;
        if (!is_name(tokens[i], name) || depth != outer) continue;
        bool item_before = i == begin + outer || is_op(tokens[i - 1], ",");
        bool item_after = i + 1 == end || is_op(tokens[i + 1], ",") || closes(tokens[i + 1]);
        if (item_before && item_after) return true;
    }
    return false;
}

// `name = value`, `a = name = value`, `name: T = value`, `a, name = ...`.
std::optional<PythonBinding> assignment(const std::vector<PythonToken>& tokens, const Statement& s,
                                        std::string_view name)
{
    std::vector<std::size_t> equals;
    int depth = 0;
    for (std::size_t i = s.begin; i < s.end; ++i) {
        const PythonToken& t = tokens[i];
        if (opens(t)) ++depth;
        if (closes(t) && depth > 0) --depth;
        if (depth == 0 && is_name(t, "lambda")) break;  // a lambda's default is not an assignment
        if (depth == 0 && is_op(t, "=")) equals.push_back(i);
    }
    if (equals.empty()) return std::nullopt;
    bool direct = false, unpacked = false;
    std::size_t start = s.begin;
    for (std::size_t end : equals) {
        bool annotated = end - start >= 2 && is_op(tokens[start + 1], ":");
        if (end > start && (end - start == 1 || annotated) && is_name(tokens[start], name))
            direct = true;
        else if (end - start > 1 && !annotated)
            unpacked = unpacked || unpacks_into(tokens, start, end, name);
        start = end + 1;
    }
    if (!direct && !unpacked) return std::nullopt;
    PythonBinding binding = binding_of(PythonBinding::Kind::assignment, s.begin);
    if (!direct) return binding;
    std::size_t value = s.end - start;
    if (value == 1 && tokens[start].kind == Kind::name) {
        binding.kind = PythonBinding::Kind::alias;
        binding.target = tokens[start].text;
    } else if (value >= 4 && is_op(tokens[s.end - 3], "(") && is_name(tokens[s.end - 2], name) &&
               is_op(tokens[s.end - 1], ")") &&
               (tokens[s.end - 4].kind == Kind::name || is_op(tokens[s.end - 4], ")"))) {
        // `push = njit(push)`: a wrapper of the function itself keeps its
        // parameters for inspect.signature (functools.wraps, numba's
        // dispatcher), so the binding before counts.
        binding.kind = PythonBinding::Kind::alias;
        binding.target = tokens[s.end - 2].text;
    }
    return binding;
}

std::optional<PythonBinding> binding_in(const std::vector<PythonToken>& tokens, const Statement& s,
                                        std::string_view name)
{
    if (auto found = definition(tokens, s, name)) return found;
    if (import_binds(tokens, s, name)) return binding_of(PythonBinding::Kind::import, s.begin);
    return assignment(tokens, s, name);
}

}  // namespace

std::vector<PythonBinding> python_bindings(const std::vector<PythonToken>& tokens, std::string_view name)
{
    struct Open {
        int column;
        bool scope;
    };
    std::vector<Open> enclosing;
    std::vector<PythonBinding> found;
    for (std::size_t begin = 0; begin < tokens.size();) {
        std::size_t end = begin;
        while (end < tokens.size() && tokens[end].kind != Kind::newline) ++end;
        if (end == begin) {
            begin = end + 1;
            continue;
        }
        Statement statement{begin, end};
        int column = tokens[begin].column;
        while (!enclosing.empty() && enclosing.back().column >= column) enclosing.pop_back();
        bool module_level = true;
        for (const auto& open : enclosing) module_level = module_level && !open.scope;
        if (auto binding = binding_in(tokens, statement, name)) {
            binding->line = tokens[begin].line;
            binding->column = column;
            binding->module_level = module_level;
            found.push_back(*binding);
        }
        enclosing.push_back({column, opens_scope(tokens, statement)});
        begin = end + 1;
    }
    return found;
}

bool python_module_binds(std::string_view source, std::string_view name)
{
    bool identifier = !name.empty() && !is_digit(name[0]);
    for (char c : name)
        identifier = identifier && (is_digit(c) || c == '_' || std::isalpha(static_cast<unsigned char>(c)) ||
                                    static_cast<unsigned char>(c) >= 0x80);
    if (!identifier) return false;  // `my-kern`, `2d`: no statement can bind it
    // Nearly every kernel module starts a line with `def <name>(`: no need to lex it.
    PythonText text(source);  // a BOM, a coding line, CRLF: as Python reads it
    source = text.text();
    std::string def = "def " + std::string(name) + "(";
    for (std::size_t at = source.find(def); at != std::string_view::npos; at = source.find(def, at + 1))
        if (at == 0 || source[at - 1] == '\n') return true;
    auto bindings = python_bindings(lex_python(source), name);
    for (const auto& binding : bindings)
        if (binding.module_level) return true;
    return false;
}

}  // namespace ck::signatures
