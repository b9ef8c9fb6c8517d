// read_python_signature: the top-level `def <name>(...)` of a module or stub.
#include "signatures/signatures.hpp"

#include "signatures/python_lexer.hpp"

#include <optional>

namespace ck {

namespace {

using signatures::PythonToken;
using Kind = PythonToken::Kind;
using Status = SignatureRead::Status;

bool is_op(const PythonToken& t, std::string_view text)
{
    return t.kind == Kind::op && t.text == text;
}

bool is_name(const PythonToken& t, std::string_view text)
{
    return t.kind == Kind::name && t.text == text;
}

bool opens(const PythonToken& t)
{
    return is_op(t, "(") || is_op(t, "[") || is_op(t, "{");
}

bool closes(const PythonToken& t)
{
    return is_op(t, ")") || is_op(t, "]") || is_op(t, "}");
}

std::size_t match(const std::vector<PythonToken>& tokens, std::size_t open)
{
    int depth = 0;
    for (std::size_t i = open; i < tokens.size(); ++i) {
        if (opens(tokens[i])) ++depth;
        if (closes(tokens[i]) && --depth == 0) return i;
    }
    return tokens.size();
}

SignatureRead make(Status status, int line, std::string reason, std::vector<std::string> parameters = {})
{
    return {status, line, std::move(parameters), std::move(reason)};
}

// The ranges of the parameters between `open` and `close`. A lambda in a
// default takes commas and a colon of its own.
std::vector<std::pair<std::size_t, std::size_t>> split_parameters(const std::vector<PythonToken>& tokens,
                                                                  std::size_t open, std::size_t close)
{
    std::vector<std::pair<std::size_t, std::size_t>> items;
    int depth = 0, lambdas = 0;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i < close; ++i) {
        const PythonToken& t = tokens[i];
        if (opens(t)) ++depth;
        if (closes(t) && depth > 0) --depth;
        if (depth != 0) continue;
        if (is_name(t, "lambda")) ++lambdas;
        if (is_op(t, ":") && lambdas > 0) --lambdas;
        if (is_op(t, ",") && lambdas == 0) {
            items.emplace_back(start, i);
            start = i + 1;
        }
    }
    items.emplace_back(start, close);
    return items;
}

SignatureRead read_parameters(const std::vector<PythonToken>& tokens, std::size_t name_at)
{
    const PythonToken& name = tokens[name_at];
    std::string function = "'" + std::string(name.text) + "'";
    std::size_t open = name_at + 1;
    if (open < tokens.size() && is_op(tokens[open], "[")) open = match(tokens, open) + 1;  // def f[T](...)
    if (open >= tokens.size() || !is_op(tokens[open], "("))
        return make(Status::unreadable, name.line, "expected '(' after def " + std::string(name.text));
    std::size_t close = match(tokens, open);
    if (close >= tokens.size())
        return make(Status::unreadable, name.line, "the parameter list of " + function + " is not closed");
    auto items = split_parameters(tokens, open, close);
    std::vector<std::string> names;
    bool keyword_only = false;
    for (std::size_t k = 0; k < items.size(); ++k) {
        auto [begin, end] = items[k];
        std::string number = "parameter " + std::to_string(k + 1) + " of " + function;
        if (begin == end) {
            if (k + 1 == items.size() && (k > 0 || items.size() == 1)) continue;  // a trailing comma, or ()
            return make(Status::unreadable, tokens[begin < close ? begin : close].line, number + " is empty");
        }
        const PythonToken& first = tokens[begin];
        if (is_op(first, "*")) {
            keyword_only = true;  // `*` or `*args`: what follows is keyword-only
        } else if (is_op(first, "**") || (is_op(first, "/") && end - begin == 1)) {
            // **kwargs: not positional; `/`: positional-only marker
        } else if (first.kind == Kind::name &&
                   (end - begin == 1 || is_op(tokens[begin + 1], ":") || is_op(tokens[begin + 1], "="))) {
            if (!keyword_only) names.emplace_back(first.text);
        } else {
            return make(Status::unreadable, first.line, number + " is not `name[: annotation][= default]`");
        }
    }
    return make(Status::found, name.line, "", std::move(names));
}

// What else a module may do with the name, for the reason of a miss.
struct OtherUse {
    int line = 0;
    std::string what;
};

std::optional<OtherUse> other_use(const std::vector<PythonToken>& tokens, std::size_t i, std::string_view name)
{
    const PythonToken& t = tokens[i];
    if (t.kind == Kind::name && t.text == name && i + 1 < tokens.size() &&
        (is_op(tokens[i + 1], "=") || is_op(tokens[i + 1], ":")))
        return OtherUse{t.line, "assigned"};
    if (!is_name(t, "from") && !is_name(t, "import")) return std::nullopt;
    for (std::size_t j = i + 1; j < tokens.size() && tokens[j].kind != Kind::newline; ++j)
        if (tokens[j].kind == Kind::name && tokens[j].text == name && (is_name(t, "from") || is_name(tokens[j - 1], "as")))
            return OtherUse{t.line, "imported"};
    return std::nullopt;
}

}  // namespace

SignatureRead read_python_signature(std::string_view source, std::string_view name, PythonDefinition which)
{
    std::vector<PythonToken> tokens = signatures::lex_python(source);
    std::optional<std::size_t> chosen;
    std::optional<OtherUse> other;
    int indented = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (!tokens[i].line_start) continue;
        std::size_t def = i + (is_name(tokens[i], "async") ? 1 : 0);
        bool is_def = def + 1 < tokens.size() && is_name(tokens[def], "def") && tokens[def + 1].kind == Kind::name &&
                      tokens[def + 1].text == name;
        if (is_def && tokens[i].column == 0) {
            if (!chosen || which == PythonDefinition::last) chosen = def + 1;
        } else if (is_def && indented == 0) {
            indented = tokens[def + 1].line;
        } else if (tokens[i].column == 0 && !other) {
            other = other_use(tokens, i, name);
        }
    }
    if (chosen) return read_parameters(tokens, *chosen);
    std::string quoted = "'" + std::string(name) + "'";
    if (other)
        return make(Status::unreadable, other->line,
                    quoted + " is " + other->what + " here, not defined by a top-level def; its parameters cannot be "
                    "read from this file");
    if (indented)
        return make(Status::not_found, indented,
                    "no top-level function " + quoted + "; this line defines one inside a class, function or block");
    return make(Status::not_found, 0, "no top-level function " + quoted);
}

}  // namespace ck
