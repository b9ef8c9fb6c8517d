// read_python_signature: the top-level `def <name>(...)` of a module or stub.
#include "signatures/signatures.hpp"

#include "signatures/python_bindings.hpp"
#include "source/python_lexer.hpp"
#include "source/python_text.hpp"

#include <optional>

namespace ck {

namespace {

using signatures::PythonToken;
using Kind = PythonToken::Kind;
using Status = SignatureRead::Status;

bool is_op(const PythonToken& t, std::string_view text) { return t.kind == Kind::op && t.text == text; }

bool is_name(const PythonToken& t, std::string_view text) { return t.kind == Kind::name && t.text == text; }

bool opens(const PythonToken& t) { return is_op(t, "(") || is_op(t, "[") || is_op(t, "{"); }

bool closes(const PythonToken& t) { return is_op(t, ")") || is_op(t, "]") || is_op(t, "}"); }

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

using signatures::PythonBinding;

std::string quoted(std::string_view name) { return "'" + std::string(name) + "'"; }

std::string described(const PythonBinding& binding)
{
    switch (binding.kind) {
        case PythonBinding::Kind::import:
            return "imported";
        case PythonBinding::Kind::class_def:
            return "a class";
        default:
            return "assigned";
    }
}

// The binding Python keeps: the last one at module level before `before`
// (a token index; none: the end), as the module's namespace holds it once
// imported.
const PythonBinding* last_binding(const std::vector<PythonBinding>& bindings, std::size_t before)
{
    const PythonBinding* last = nullptr;
    for (const auto& binding : bindings)
        if (binding.module_level && binding.name_token < before) last = &binding;
    return last;
}

// `name = other`: reads `other` as bound before that line, following a chain
// of such names a few steps (a cycle is not a function).
SignatureRead read_binding(const std::vector<PythonToken>& tokens, std::string_view name, std::size_t before)
{
    constexpr int max_aliases = 8;
    std::string chain = quoted(name);
    for (int step = 0; step <= max_aliases; ++step) {
        auto bindings = signatures::python_bindings(tokens, name);
        const PythonBinding* binding = last_binding(bindings, before);
        if (!binding) {
            if (step > 0)
                return make(Status::unreadable, 0,
                            chain + ": the module defines no " + quoted(name) +
                                " before it; its parameters cannot be read from this file");
            for (const auto& b : bindings)
                if (b.kind == PythonBinding::Kind::def)
                    return make(
                        Status::not_found, b.line,
                        "no top-level function " + quoted(name) + "; this line defines one inside a class or function");
            return make(Status::not_found, 0, "no top-level function " + quoted(name));
        }
        if (binding->kind == PythonBinding::Kind::def) return read_parameters(tokens, binding->name_token);
        if (binding->kind != PythonBinding::Kind::alias)
            return make(Status::unreadable, binding->line,
                        quoted(name) + " is " + described(*binding) + " here, not defined by a def; its parameters " +
                            "cannot be read from this file");
        chain += " is " + quoted(binding->target) + " (line " + std::to_string(binding->line) + ")";
        name = binding->target;
        before = binding->name_token;
    }
    return make(Status::unreadable, 0, chain + ": too many names for one function");
}

// A binding in a module-level `if` or `try` block may or may not run. When
// several bindings can be the one Python keeps and they take different
// parameters, which one cunumpy calls depends on how the module runs: that is
// said, not guessed.
SignatureRead read_module(const std::vector<PythonToken>& tokens, std::string_view name)
{
    std::vector<const PythonBinding*> candidates;
    auto bindings = signatures::python_bindings(tokens, name);
    for (const auto& binding : bindings) {
        if (!binding.module_level) continue;
        if (binding.column == 0) candidates.clear();  // runs whatever came before
        candidates.push_back(&binding);
    }
    SignatureRead kept = read_binding(tokens, name, tokens.size());
    if (candidates.size() < 2) return kept;
    bool agree = kept.status == Status::found;
    std::string lines;
    for (const PythonBinding* candidate : candidates) {
        SignatureRead read = read_binding(tokens, name, candidate->name_token + 1);
        agree = agree && read.status == Status::found && read.parameters == kept.parameters;
        lines += (lines.empty() ? "" : ", ") + std::to_string(candidate->line);
    }
    if (agree) return kept;
    SignatureRead conditional =
        make(Status::unreadable, candidates.front()->line,
             quoted(name) + " is bound at lines " + lines +
                 ", in branches of a module-level "
                 "if or try with different parameters: which one cunumpy calls depends on how the "
                 "module runs. Define it once, or give every branch the same parameters");
    conditional.conditional = true;
    return conditional;
}

// A stub lists each function once; cunumpy's reader takes the first
// top-level def of the name.
SignatureRead read_stub(const std::vector<PythonToken>& tokens, std::string_view name)
{
    for (const auto& binding : signatures::python_bindings(tokens, name))
        if (binding.kind == PythonBinding::Kind::def && binding.column == 0)
            return read_parameters(tokens, binding.name_token);
    return read_binding(tokens, name, tokens.size());  // says why there is none
}

}  // namespace

SignatureRead read_python_signature(std::string_view source, std::string_view name, PythonDefinition which)
{
    signatures::PythonText text(source);  // a BOM, a coding line, CRLF: as Python reads it
    std::vector<PythonToken> tokens = signatures::lex_python(text.text());
    if (which == PythonDefinition::first) return read_stub(tokens, name);
    return read_module(tokens, name);
}

}  // namespace ck
