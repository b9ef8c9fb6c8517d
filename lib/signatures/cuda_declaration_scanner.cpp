#include "signatures/cuda_declaration_scanner.hpp"

namespace ck::signatures {

namespace {

using Kind = CppToken::Kind;

// Bounds that keep any input linear: real statements are far shorter.
constexpr std::size_t max_statement_tokens = 200000;
constexpr std::size_t max_alternatives = 16;
constexpr std::size_t max_declarations = 256;

bool is(const CppToken& token, const char* text) { return token.kind != Kind::literal && token.text == text; }

bool opens(const CppToken& t) { return is(t, "(") || is(t, "[") || is(t, "{"); }

bool closes(const CppToken& t) { return is(t, ")") || is(t, "]") || is(t, "}"); }

// Skips `template <...>` headers; returns the index after them.
std::size_t after_template_headers(const std::vector<CppToken>& s)
{
    std::size_t at = 0;
    while (at < s.size() && is(s[at], "template")) {
        ++at;
        if (at >= s.size() || !is(s[at], "<")) continue;
        int angle = 0, depth = 0;
        for (; at < s.size(); ++at) {
            if (opens(s[at])) ++depth;
            if (closes(s[at])) --depth;
            if (depth == 0 && is(s[at], "<")) ++angle;
            if (depth == 0 && is(s[at], ">") && --angle == 0) break;
        }
        ++at;
    }
    return at;
}

// The parameters of the last `template <...>` header of `s` (the one of the
// function itself), split at top-level commas.
std::vector<TemplateParameter> template_parameters(const std::vector<CppToken>& s, std::size_t end)
{
    std::size_t open = s.size();
    for (std::size_t at = 0; at + 1 < end; ++at)
        if (is(s[at], "template") && is(s[at + 1], "<")) open = at + 1;
    std::vector<TemplateParameter> parameters;
    if (open >= end) return parameters;
    std::vector<std::vector<CppToken>> items(1);
    int angle = 0, depth = 0;
    for (std::size_t at = open; at < end; ++at) {
        if (opens(s[at])) ++depth;
        if (closes(s[at])) --depth;
        if (depth == 0 && is(s[at], "<") && ++angle == 1) continue;
        if (depth == 0 && is(s[at], ">") && --angle == 0) break;
        if (depth == 0 && angle == 1 && is(s[at], ","))
            items.emplace_back();
        else
            items.back().push_back(s[at]);
    }
    for (const auto& item : items) {
        if (item.empty()) continue;
        TemplateParameter parameter;
        parameter.is_type = is(item.front(), "typename") || is(item.front(), "class");
        std::size_t stop = item.size();
        for (std::size_t i = 0; i < item.size(); ++i)
            if (is(item[i], "=")) {
                stop = i;
                parameter.has_default = true;
                break;
            }
        if (stop > 1 && item[stop - 1].kind == Kind::identifier && !is(item[stop - 1], "typename") &&
            !is(item[stop - 1], "class"))
            parameter.name = item[stop - 1].text;
        parameters.push_back(std::move(parameter));
    }
    return parameters;
}

// `template __global__ void push<double>(...)` but not `extern template`:
// the statement starts with `template` not followed by `<`.
bool is_explicit_instantiation(const std::vector<CppToken>& s)
{
    return s.size() > 1 && is(s[0], "template") && !is(s[1], "<");
}

}  // namespace

void CudaDeclarationScanner::token(const CppToken& token)
{
    ++serial_;
    if (state_.braces > 0) {
        if (is(token, "{")) ++state_.braces;
        if (is(token, "}") && --state_.braces == 0) {
            if (state_.in_function) {
                state_.statement.clear();
                state_.alternatives.clear();
                state_.in_function = false;
            } else {
                state_.statement.push_back({CppToken{Kind::punctuator, "{}", token.line, false}, serial_});
            }
        }
        return;
    }
    at_namespace_level(token);
}

void CudaDeclarationScanner::at_namespace_level(const CppToken& token)
{
    // Inside parentheses everything belongs to the statement: `= {}` as a
    // default argument, a lambda in __launch_bounds__(...).
    if (is(token, "(") || is(token, "[")) ++state_.parens;
    if ((is(token, ")") || is(token, "]")) && state_.parens > 0) --state_.parens;
    if (state_.parens > 0 || is(token, ")") || is(token, "]")) return append(token);
    if (is(token, ";")) return finish_statement(false);
    if (is(token, "{")) return open_brace();
    if (is(token, "}")) {
        finish_statement(false);
        if (state_.scopes > 0) --state_.scopes;
        return;
    }
    append(token);
}

void CudaDeclarationScanner::append(const CppToken& token)
{
    if (state_.statement.size() >= max_statement_tokens) {
        state_.statement.clear();
        state_.alternatives.clear();
        state_.parens = 0;
    }
    state_.statement.push_back({token, serial_});
}

void CudaDeclarationScanner::open_brace()
{
    if (opens_scope()) {
        state_.statement.clear();
        state_.alternatives.clear();
        ++state_.scopes;
        return;
    }
    bool function = looks_like_function();
    if (function) finish_statement(true);
    state_.braces = 1;
    state_.in_function = function;
}

void CudaDeclarationScanner::finish_statement(bool has_body)
{
    analyze(state_.statement, has_body);
    for (const auto& alternative : state_.alternatives) {
        Statement full = alternative.tokens;
        if (alternative.length <= state_.statement.size())
            full.insert(full.end(), state_.statement.begin() + static_cast<std::ptrdiff_t>(alternative.length),
                        state_.statement.end());
        analyze(full, has_body);
    }
    state_.statement.clear();
    state_.alternatives.clear();
    state_.parens = 0;
}

void CudaDeclarationScanner::analyze(const Statement& statement, bool has_body)
{
    std::vector<CppToken> tokens;
    std::vector<int> depths;
    tokens.reserve(statement.size());
    int depth = 0;
    std::size_t global = statement.size();
    for (std::size_t i = 0; i < statement.size(); ++i) {
        const CppToken& t = statement[i].token;
        tokens.push_back(t);
        depths.push_back(depth);
        if (depth == 0 && global == statement.size() && is(t, "__global__")) global = i;
        if (opens(t)) ++depth;
        if (closes(t) && depth > 0) --depth;
    }
    if (global == statement.size()) return record_macro_use(tokens, depths, statement);
    for (std::size_t i = global + 1; i + 1 < tokens.size(); ++i) {
        if (depths[i] != 0 || tokens[i].kind != Kind::identifier || tokens[i].text != name_) continue;
        if (is(tokens[i + 1], "<") && !has_body && is_explicit_instantiation(tokens))
            return add_instantiation(tokens, i, statement[i].serial);
        if (!is(tokens[i + 1], "(")) continue;
        bool is_template = after_template_headers(tokens) > 0;
        CudaDeclaration declaration{tokens[i].line, has_body, is_template, read_parameter_list(tokens, i + 1), {}};
        if (is_template) declaration.template_parameters = template_parameters(tokens, i);
        add(std::move(declaration), statement[i].serial);
        return;
    }
}

void CudaDeclarationScanner::add_instantiation(const std::vector<CppToken>& tokens, std::size_t name, long serial)
{
    std::size_t open = name + 1, close = tokens.size();
    int angle = 0, depth = 0;
    for (std::size_t at = open; at < tokens.size() && close == tokens.size(); ++at) {
        if (opens(tokens[at])) ++depth;
        if (closes(tokens[at])) --depth;
        if (depth == 0 && is(tokens[at], "<")) ++angle;
        if (depth == 0 && is(tokens[at], ">") && --angle == 0) close = at;
    }
    if (close + 1 >= tokens.size() || !is(tokens[close + 1], "(")) return;
    if (instantiations_.size() >= max_declarations || !seen_.insert("instance|" + std::to_string(serial)).second)
        return;
    instantiations_.push_back({tokens[name].line, spell(tokens, open + 1, close)});
}

void CudaDeclarationScanner::add(CudaDeclaration declaration, long serial)
{
    std::string identity = std::to_string(serial) + "|" + declaration.parameters.problem;
    for (const auto& name : declaration.parameters.names) identity += "," + name;
    if (declarations_.size() >= max_declarations || !seen_.insert(identity).second) return;
    declarations_.push_back(std::move(declaration));
}

// `KERNEL(push, double* x)` at namespace level: the name inside the
// arguments of a call-like form whose callee is an identifier.
void CudaDeclarationScanner::record_macro_use(const std::vector<CppToken>& tokens, const std::vector<int>& depths,
                                              const Statement& statement)
{
    std::size_t open = tokens.size();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (depths[i] == 0 && is(tokens[i], "(")) open = i;
        bool declared = depths[i] == 0 && tokens[i].kind == Kind::identifier && tokens[i].text == name_ && i > 0 &&
                        i + 1 < tokens.size() && is(tokens[i + 1], "(");
        if (declared && line_without_global_ == 0) line_without_global_ = tokens[i].line;
        if (depths[i] == 0 || tokens[i].kind != Kind::identifier || tokens[i].text != name_) continue;
        if (open == 0 || open >= tokens.size() || tokens[open - 1].kind != Kind::identifier) continue;
        if (!seen_.insert("macro|" + std::to_string(statement[i].serial)).second) continue;
        if (macro_uses_.size() < max_declarations)
            macro_uses_.push_back({tokens[open - 1].text, tokens[open - 1].line});
    }
}

// `namespace a::b {`, `extern "C" {`, also after words the reader cannot
// see through (`CUB_NAMESPACE_BEGIN namespace detail {`, a macro from
// another file that ends in no `;`): only the tail of the statement counts.
bool CudaDeclarationScanner::opens_scope() const
{
    const Statement& s = state_.statement;
    std::size_t n = s.size();
    if (n >= 2 && is(s[n - 2].token, "extern") && s[n - 1].token.kind == Kind::literal) return true;
    std::size_t at = n;
    while (at > 0 && (s[at - 1].token.kind == Kind::identifier || is(s[at - 1].token, "::")) &&
           !is(s[at - 1].token, "namespace"))
        --at;
    return at > 0 && is(s[at - 1].token, "namespace");
}

// A `{` starts a function body when the statement so far is a declarator
// with parameters: not a class, enum or typedef, and no `=` (an initializer).
bool CudaDeclarationScanner::looks_like_function() const
{
    std::vector<CppToken> s;
    for (const auto& entry : state_.statement) s.push_back(entry.token);
    std::size_t at = after_template_headers(s);
    if (at < s.size()) {
        const std::string& first = s[at].text;
        if (first == "struct" || first == "class" || first == "union" || first == "enum" || first == "typedef")
            return false;
    }
    int depth = 0;
    bool parameters = false;
    for (; at < s.size(); ++at) {
        if (depth == 0 && is(s[at], "=")) return false;
        if (depth == 0 && is(s[at], "(")) parameters = true;
        if (opens(s[at])) ++depth;
        if (closes(s[at]) && depth > 0) --depth;
    }
    return parameters;
}

void CudaDeclarationScanner::finish()
{
    if (state_.braces == 0) finish_statement(false);
}

void CudaDeclarationScanner::branch_begin()
{
    saved_.push_back(state_);
    branch_ends_.emplace_back();
}

// The statement as this branch left it, when the branch changed it: it may
// continue after the `#endif`.
void CudaDeclarationScanner::remember_branch()
{
    if (branch_ends_.empty() || branch_ends_.back().size() >= max_alternatives) return;
    const Statement& before = saved_.back().statement;
    const Statement& now = state_.statement;
    bool changed = now.size() != before.size() || (!now.empty() && now.back().serial != before.back().serial);
    if (changed && !now.empty()) branch_ends_.back().push_back(now);
}

void CudaDeclarationScanner::branch_next()
{
    if (saved_.empty()) return;
    remember_branch();
    std::vector<Statement> ends = std::move(branch_ends_.back());
    state_ = saved_.back();
    branch_ends_.back() = std::move(ends);
}

void CudaDeclarationScanner::branch_end()
{
    if (saved_.empty()) return;
    std::vector<Statement> ends = std::move(branch_ends_.back());
    branch_ends_.pop_back();
    saved_.pop_back();
    // The last branch's statement is the one reading goes on with; the
    // others become alternatives of it.
    for (auto& end : ends)
        if (state_.alternatives.size() < max_alternatives)
            state_.alternatives.push_back({std::move(end), state_.statement.size()});
}

}  // namespace ck::signatures
