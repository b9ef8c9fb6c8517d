#include "signatures/cpp_parameter_list.hpp"

#include <set>
#include <string_view>

namespace ck::signatures {

namespace {

using Kind = CppToken::Kind;
using Indices = std::vector<std::size_t>;
constexpr std::size_t none = static_cast<std::size_t>(-1);

// Words that qualify a type or a declaration but are not a type.
const std::set<std::string_view> qualifiers = {
    "const",       "volatile",  "__restrict__",    "__restrict",   "restrict",   "register",   "__grid_constant__",
    "mutable",     "constexpr", "static",          "inline",       "__device__", "__shared__", "__constant__",
    "__managed__", "__host__",  "__forceinline__", "__noinline__",
};

// Words that are a type by themselves.
const std::set<std::string_view> builtin_types = {
    "void", "bool",   "char",     "char8_t", "char16_t", "char32_t", "wchar_t", "short", "int",
    "long", "signed", "unsigned", "float",   "double",   "__int128", "auto",    "_Bool",
};

const std::set<std::string_view> elaborators = {"struct", "class", "union", "enum", "typename"};

// `name(...)` groups that say something about a declaration, not what it is.
const std::set<std::string_view> attribute_calls = {
    "__attribute__", "__attribute",       "__declspec",  "alignas",          "_Alignas",
    "__align__",     "__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__nv_pure__",
};

// Keywords that can never be a parameter's name.
const std::set<std::string_view> other_keywords = {
    "this",       "operator",     "sizeof",
    "decltype",   "template",     "return",
    "new",        "delete",       "true",
    "false",      "nullptr",      "namespace",
    "typedef",    "using",        "extern",
    "if",         "for",          "while",
    "do",         "switch",       "case",
    "default",    "goto",         "break",
    "continue",   "static_cast",  "reinterpret_cast",
    "const_cast", "dynamic_cast", "throw",
    "try",        "catch",        "public",
    "private",    "protected",    "virtual",
    "friend",     "noexcept",     "alignof",
    "typeid",     "asm",          "__global__",
    "else",       "co_await",     "co_return",
    "co_yield",   "requires",     "concept",
};

bool is(const CppToken& token, std::string_view text) { return token.kind != Kind::literal && token.text == text; }

bool opens(const CppToken& t) { return is(t, "(") || is(t, "[") || is(t, "{"); }

bool closes(const CppToken& t) { return is(t, ")") || is(t, "]") || is(t, "}"); }

bool is_keyword(const CppToken& t)
{
    return qualifiers.count(t.text) || builtin_types.count(t.text) || elaborators.count(t.text) ||
           attribute_calls.count(t.text) || other_keywords.count(t.text);
}

// The closer matching the opener at `open`, or `none` before `end`.
std::size_t match(const std::vector<CppToken>& tokens, std::size_t open, std::size_t end)
{
    int depth = 0;
    for (std::size_t i = open; i < end; ++i) {
        if (opens(tokens[i])) ++depth;
        if (closes(tokens[i]) && --depth == 0) return i;
    }
    return none;
}

// The opener matching the closer at q[close] within q, or `none`.
std::size_t match_back(const std::vector<CppToken>& tokens, const Indices& q, std::size_t close)
{
    int depth = 0;
    for (std::size_t i = close + 1; i-- > 0;) {
        if (closes(tokens[q[i]])) ++depth;
        if (opens(tokens[q[i]]) && --depth == 0) return i;
    }
    return none;
}

struct Name {
    std::string name;  ///< empty: see problem
    std::string problem;
    bool unnamed = false;
    std::size_t at = none;       ///< index of the name's token
    std::vector<CppToken> type;  ///< the declaration without name, attributes and default
};

class ParameterReader {
public:
    ParameterReader(const std::vector<CppToken>& tokens, std::size_t number) : tokens_(tokens), number_(number) {}

    Name read(std::size_t begin, std::size_t end)
    {
        text_ = spell(tokens_, begin, end);
        Indices q = without_attributes(begin, without_default(begin, end));
        const Indices declaration = q;
        if (q.empty()) return fail("is empty");
        if (q.size() == 1 && is(tokens_[q[0]], "...")) return fail("is variadic (...), which a kernel cannot take");
        strip_trailing_arrays(q);
        if (q.empty()) return fail("has no name", true);  // only array bounds: `[3][3]`
        Name name = is(tokens_[q.back()], ")") ? parenthesized(q) : plain(q);
        if (!name.name.empty())
            for (std::size_t i : declaration)
                if (i != name.at) name.type.push_back(tokens_[i]);
        return name;
    }

private:
    Name fail(const std::string& why, bool unnamed = false) const
    {
        return {"", "parameter " + std::to_string(number_) + " (" + text_ + ") " + why, unnamed, none, {}};
    }

    std::size_t without_default(std::size_t begin, std::size_t end) const
    {
        int depth = 0;
        for (std::size_t i = begin; i < end; ++i) {
            if (opens(tokens_[i])) ++depth;
            if (closes(tokens_[i])) --depth;
            if (depth == 0 && is(tokens_[i], "=")) return i;
        }
        return end;
    }

    Indices without_attributes(std::size_t begin, std::size_t end) const
    {
        Indices q;
        for (std::size_t i = begin; i < end; ++i) {
            bool bracket_attribute = is(tokens_[i], "[") && i + 1 < end && is(tokens_[i + 1], "[");
            bool call_attribute = tokens_[i].kind == Kind::identifier && attribute_calls.count(tokens_[i].text) &&
                                  i + 1 < end && is(tokens_[i + 1], "(");
            if (bracket_attribute || call_attribute) {
                std::size_t close = match(tokens_, bracket_attribute ? i : i + 1, end);
                if (close == none) break;
                i = close;
                continue;
            }
            q.push_back(i);
        }
        return q;
    }

    void strip_trailing_arrays(Indices& q) const
    {
        while (!q.empty() && is(tokens_[q.back()], "]")) {
            std::size_t open = match_back(tokens_, q, q.size() - 1);
            if (open == none || !is(tokens_[q[open]], "[")) return;
            q.resize(open);
        }
    }

    // `void (*callback)(int)`, `double (&values)[3]`, or a macro call.
    Name parenthesized(const Indices& q)
    {
        std::size_t open = match_back(tokens_, q, q.size() - 1);
        if (open == none) return fail("has unbalanced parentheses");
        if (open > 0 && is(tokens_[q[open - 1]], ")")) {
            std::size_t declarator = match_back(tokens_, q, open - 1);
            if (declarator == none) return fail("has unbalanced parentheses");
            return declarator_name(Indices(q.begin() + declarator + 1, q.begin() + open - 1), 0);
        }
        Indices inner(q.begin() + open + 1, q.end() - 1);
        if (!inner.empty() && is_pointer_mark(tokens_[inner.front()])) return declarator_name(inner, 0);
        return fail("is a function type or a macro call; its name cannot be read: write the parameter out");
    }

    static bool is_pointer_mark(const CppToken& t) { return is(t, "*") || is(t, "&") || is(t, "^"); }

    Name declarator_name(Indices d, int depth)
    {
        if (depth > 32) return fail("is nested too deeply");
        std::size_t at = 0;
        while (at < d.size()) {
            const CppToken& t = tokens_[d[at]];
            bool member_pointer = t.kind == Kind::identifier && at + 1 < d.size() && is(tokens_[d[at + 1]], "::");
            if (is_pointer_mark(t) || qualifiers.count(t.text) || member_pointer || is(t, "::"))
                ++at;
            else
                break;
        }
        d.erase(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(at));
        strip_trailing_arrays(d);
        if (!d.empty() && is(tokens_[d.back()], ")")) {
            std::size_t open = match_back(tokens_, d, d.size() - 1);
            if (open == none) return fail("has unbalanced parentheses");
            if (open == 0) return declarator_name(Indices(d.begin() + 1, d.end() - 1), depth + 1);
            return declarator_name(Indices(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(open)), depth + 1);
        }
        if (d.size() == 1 && tokens_[d[0]].kind == Kind::identifier && !is_keyword(tokens_[d[0]]))
            return {tokens_[d[0]].text, "", false, d[0], {}};
        return fail(d.empty() ? "has no name" : "has a declarator this reader cannot read", d.empty());
    }

    Name plain(const Indices& q)
    {
        const CppToken& last = tokens_[q.back()];
        if (last.kind != Kind::identifier || is_keyword(last) || q.size() == 1) return fail("has no name", true);
        const CppToken& before = tokens_[q[q.size() - 2]];
        if (is(before, "::") || elaborators.count(before.text) || is(before, ".")) return fail("has no name", true);
        bool has_type = false;
        for (std::size_t i = 0; i + 1 < q.size(); ++i) has_type = has_type || !qualifiers.count(tokens_[q[i]].text);
        if (!has_type) return fail("has no name, or no type", true);
        return {last.text, "", false, q.back(), {}};
    }

    const std::vector<CppToken>& tokens_;
    std::size_t number_;
    std::string text_;
};

// The [begin, end) ranges of the parameters between `open` and `close`.
std::vector<std::pair<std::size_t, std::size_t>> split_parameters(const std::vector<CppToken>& tokens, std::size_t open,
                                                                  std::size_t close)
{
    std::vector<std::pair<std::size_t, std::size_t>> items;
    int depth = 0, angle = 0;
    bool in_default = false;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i < close; ++i) {
        const CppToken& t = tokens[i];
        if (opens(t)) ++depth;
        if (closes(t) && depth > 0) --depth;
        if (depth != 0) continue;
        // Angle brackets nest only in types: in a default value they compare.
        if (!in_default && is(t, "<")) ++angle;
        if (!in_default && is(t, ">") && angle > 0) --angle;
        if (angle == 0 && is(t, "=")) in_default = true;
        if (angle == 0 && is(t, ",")) {
            items.emplace_back(start, i);
            start = i + 1;
            in_default = false;
        }
    }
    items.emplace_back(start, close);
    return items;
}

}  // namespace

std::string spell(const std::vector<CppToken>& tokens, std::size_t begin, std::size_t end)
{
    std::string text;
    for (std::size_t i = begin; i < end && i < tokens.size(); ++i) {
        const std::string& word = tokens[i].text;
        bool tight = text.empty() || word == "," || word == ")" || word == "]" || word == ">" || word == "::" ||
                     word == "*" || word == "&" || word == "<" || word == "[" || text.back() == '(' ||
                     text.back() == '[' || text.back() == '<' || text.ends_with("::");
        text += (tight ? "" : " ") + word;
        if (text.size() > 120) return text.substr(0, 117) + "...";
    }
    return text;
}

ParameterList read_parameter_list(const std::vector<CppToken>& tokens, std::size_t open)
{
    ParameterList list;
    list.close = match(tokens, open, tokens.size());
    if (list.close == none) {
        list.problem = "the parameter list has no closing parenthesis";
        return list;
    }
    auto items = split_parameters(tokens, open, list.close);
    if (items.size() == 1) {
        auto [begin, end] = items[0];
        if (begin == end || (end - begin == 1 && is(tokens[begin], "void"))) {
            list.ok = true;
            return list;
        }
    }
    list.unnamed_only = true;
    for (std::size_t k = 0; k < items.size(); ++k) {
        Name name = ParameterReader(tokens, k + 1).read(items[k].first, items[k].second);
        if (!name.name.empty()) {
            list.names.push_back(name.name);
            list.types.push_back(std::move(name.type));
        } else {
            if (list.problem.empty()) list.problem = name.problem;
            list.unnamed_only = list.unnamed_only && name.unnamed;
        }
    }
    list.ok = list.problem.empty();
    if (list.ok)
        list.unnamed_only = false;
    else
        list.types.clear();
    return list;
}

}  // namespace ck::signatures
