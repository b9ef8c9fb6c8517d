#include "struct_headers/struct_reader.hpp"

#include "cunumpy_kernels/error.hpp"
#include "runtime/kernel_signature.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace ck {

namespace {

using signatures::CppToken;
using Tokens = std::vector<CppToken>;

std::size_t aligned(std::size_t offset, std::size_t alignment)
{
    return (offset + alignment - 1) / alignment * alignment;
}

// C's arithmetic types by the words that spell them (order aside), LP64.
std::optional<StructLayout> arithmetic(std::vector<std::string> words)
{
    std::sort(words.begin(), words.end());
    auto count = [&](const char* w) { return std::count(words.begin(), words.end(), w); };
    std::size_t known = count("signed") + count("unsigned") + count("short") + count("long") + count("int") +
                        count("char") + count("float") + count("double") + count("bool") + count("wchar_t") +
                        count("char8_t") + count("char16_t") + count("char32_t");
    if (words.empty() || known != words.size()) return std::nullopt;
    auto sized = [](std::size_t n) { return std::optional<StructLayout>(StructLayout{n, n}); };
    if (count("bool") || count("char") || count("char8_t"))
        return words.size() - count("signed") - count("unsigned") == 1 ? sized(1) : std::nullopt;
    if (count("char16_t")) return sized(2);
    if (count("char32_t") || count("wchar_t")) return sized(4);
    if (count("float")) return words.size() == 1 ? sized(4) : std::nullopt;
    // long double: none, as nvcc's device code makes it a double and the host does not.
    if (count("double")) return words.size() == 1 ? sized(8) : std::nullopt;
    if (count("short")) return sized(2);
    if (count("long")) return sized(8);
    return sized(4);  // int, signed, unsigned
}

// The fixed-width and library names of integer types, LP64.
std::optional<StructLayout> library_integer(const std::string& name)
{
    static const std::map<std::string, std::size_t> sizes = {
        {"int8_t", 1},    {"uint8_t", 1},  {"int16_t", 2},   {"uint16_t", 2}, {"int32_t", 4},   {"uint32_t", 4},
        {"int64_t", 8},   {"uint64_t", 8}, {"size_t", 8},    {"ssize_t", 8},  {"ptrdiff_t", 8}, {"intptr_t", 8},
        {"uintptr_t", 8}, {"intmax_t", 8}, {"uintmax_t", 8}, {"__half", 2},   {"half", 2},
    };
    auto found = sizes.find(name);
    if (found == sizes.end()) return std::nullopt;
    return StructLayout{found->second, found->second};
}

// A member being laid out: its name, its layout and how many (an array).
struct MemberLayout {
    std::string name;  // "" for an anonymous struct or union
    StructLayout layout;
    std::size_t count = 1;
    std::vector<std::pair<std::string, std::size_t>> inner;  // an anonymous aggregate's members, from its start
    bool pointer = false;
};

// The members of the struct or union being read; `ok` false once one cannot be laid out.
struct Body {
    std::vector<MemberLayout> members;
    bool ok = true;
};

struct Aggregate {
    bool definition = false;  // false: `struct X x;` or `struct X;`, a use
    std::string name;         // "" when anonymous
    std::optional<StructLayout> layout;
    std::vector<std::pair<std::string, std::size_t>> offsets;
    std::size_t end = 0;  // after it
};

const std::set<std::string>& skipped_words()
{
    static const std::set<std::string> words = {"const",    "volatile",   "mutable",  "struct",       "class",
                                                "union",    "enum",       "typename", "__restrict__", "__restrict",
                                                "restrict", "__device__", "__host__", "__managed__",  "__constant__",
                                                "register", "inline"};
    return words;
}

class Reader {
public:
    Reader(const Tokens& tokens, const std::function<std::string(int)>& where) : t_(tokens), where_(where) {}

    StructReading read()
    {
        scope(0, t_.size(), "");
        return std::move(out_);
    }

private:
    const Tokens& t_;
    const std::function<std::string(int)>& where_;
    StructReading out_;
    std::map<std::string, StructLayout> types_;  // structs, unions, enums and aliases, plain and qualified
    std::set<std::string> unreadable_;           // structs that could not be laid out

    // A construct that cannot be laid out; returns false.
    bool problem(std::size_t at, const std::string& what)
    {
        out_.problems.push_back({where_(t_.empty() ? 0 : t_[std::min(at, t_.size() - 1)].line), what});
        return false;
    }

    bool is(std::size_t i, const char* text) const
    {
        return i < t_.size() && t_[i].kind == CppToken::Kind::punctuator && t_[i].text == text;
    }
    bool word(std::size_t i, const char* text) const
    {
        return i < t_.size() && t_[i].kind == CppToken::Kind::identifier && t_[i].text == text;
    }
    bool identifier(std::size_t i) const { return i < t_.size() && t_[i].kind == CppToken::Kind::identifier; }
    bool aggregate_word(std::size_t i) const { return word(i, "struct") || word(i, "class") || word(i, "union"); }

    // The index after the bracket opened at `open` closes ((), [], {}).
    std::size_t after_closer(std::size_t open) const
    {
        int depth = 0;
        for (std::size_t i = open; i < t_.size(); ++i) {
            if (is(i, "(") || is(i, "[") || is(i, "{")) ++depth;
            if ((is(i, ")") || is(i, "]") || is(i, "}")) && --depth == 0) return i + 1;
        }
        return t_.size();
    }

    std::size_t after_directive(std::size_t i)
    {
        if (t_[i].text == "pragma" && word(i + 1, "pack"))
            problem(i, "#pragma pack changes the layout of what follows; remove it (CudaStruct writes none)");
        while (i < t_.size() && t_[i].kind != CppToken::Kind::directive_end) ++i;
        return i + 1;
    }

    // After a declaration that lays nothing out: after its `;`, or after a function's body.
    std::size_t after_statement(std::size_t i, std::size_t end) const
    {
        while (i < end) {
            if (is(i, ";")) return i + 1;
            if (is(i, "{")) {
                bool initializer = i > 0 && is(i - 1, "=");
                i = after_closer(i);
                if (is(i, ";")) return i + 1;
                if (!initializer && !is(i, ",") && !is(i, "{")) return i;
                continue;
            }
            i = is(i, "(") || is(i, "[") ? after_closer(i) : i + 1;
        }
        return end;
    }

    // Declarations of the file, a namespace or an `extern "C"` block.
    void scope(std::size_t i, std::size_t end, const std::string& prefix)
    {
        while (i < end) {
            if (word(i, "namespace") || (word(i, "inline") && word(i + 1, "namespace"))) {
                i = namespace_block(i, end, prefix);
            } else if (word(i, "extern") && i + 2 < end && t_[i + 1].kind == CppToken::Kind::literal &&
                       is(i + 2, "{")) {
                std::size_t close = after_closer(i + 2);
                scope(i + 3, close - 1, prefix);
                i = close;
            } else {
                i = std::max(declaration(i, end, prefix, nullptr), i + 1);
            }
        }
    }

    std::size_t namespace_block(std::size_t i, std::size_t end, const std::string& prefix)
    {
        std::size_t j = word(i, "inline") ? i + 2 : i + 1;
        std::string name;
        while (identifier(j) || is(j, "::")) name += t_[j++].text;
        if (!is(j, "{")) return after_statement(j, end);  // a namespace alias
        std::size_t close = after_closer(j);
        scope(j + 1, close - 1, name.empty() ? prefix : prefix + name + "::");
        return close;
    }

    // A template's layout depends on its arguments: a struct template is a problem.
    std::size_t templated(std::size_t i, std::size_t end, Body* body)
    {
        std::size_t j = i + 1;
        int depth = 0;
        for (; j < end; ++j) {
            if (is(j, "<")) ++depth;
            if (is(j, ">") && --depth <= 0) break;
            if (is(j, ">>") && (depth -= 2) <= 0) break;
        }
        ++j;
        if (aggregate_word(j)) {
            std::string name = identifier(j + 1) ? t_[j + 1].text : "";
            problem(j, "template " + t_[j].text + " " + name +
                           ": a template's layout depends on its arguments; write a plain struct for each layout "
                           "a kernel takes");
            if (body) body->ok = false;
        }
        return after_statement(j, end);
    }

    void define(const std::string& prefix, const std::string& name, const StructLayout& layout)
    {
        types_[name] = layout;
        if (!prefix.empty()) types_[prefix + name] = layout;
        unreadable_.erase(name);
    }

    // `alignas(N)`, `alignas(type)`, `__align__(N)`, `__attribute__((aligned(N)))` at `i`: the
    // alignment asked for (0: none), `i` moved past it; nothing when one cannot be read.
    bool alignment_specifier(std::size_t& i, std::size_t& alignment, const std::string& owner)
    {
        const std::size_t at = i;
        if (!alignment_word(at)) return true;
        const std::size_t close = after_closer(at + 1);
        i = close;  // past it, whatever it says
        if (word(at, "alignas") || word(at, "__align__")) {
            auto asked = constant(at + 2, close - 1);
            if (!asked && word(at, "alignas")) {
                if (auto type = resolve(at + 2, close - 1, owner, false)) asked = type->alignment;
            }
            if (!asked) return problem(at, owner + t_[at].text + "(...) of an alignment that is not a number");
            alignment = std::max(alignment, *asked);
            return true;
        }
        {
            for (std::size_t k = at + 2; k + 1 < close; ++k) {
                if (word(k, "packed") || word(k, "__packed__"))
                    return problem(k, owner + "a packed layout (__attribute__((packed))); remove it");
                if ((word(k, "aligned") || word(k, "__aligned__")) && is(k + 1, "(")) {
                    auto asked = constant(k + 2, after_closer(k + 1) - 1);
                    if (!asked) return problem(k, owner + "__attribute__((aligned(...))) that is not a number");
                    alignment = std::max(alignment, *asked);
                }
            }
            return true;
        }
    }

    bool alignment_word(std::size_t i) const
    {
        return word(i, "alignas") || word(i, "__align__") || word(i, "__attribute__") || word(i, "__declspec");
    }

    // An integer literal spanning [begin, end); nothing for anything else.
    std::optional<std::size_t> constant(std::size_t begin, std::size_t end) const
    {
        if (end != begin + 1 || t_[begin].kind != CppToken::Kind::number) return std::nullopt;
        std::string text = t_[begin].text;
        text.erase(std::remove(text.begin(), text.end(), '\''), text.end());
        try {
            std::size_t used = 0;
            unsigned long long value = std::stoull(text, &used, 0);
            std::string suffix = text.substr(used);
            if (suffix.find_first_not_of("uUlLzZ") != std::string::npos) return std::nullopt;
            return static_cast<std::size_t>(value);
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }

    // The layout of the type spelled by [begin, end), qualifiers dropped;
    // nothing (and a problem, when `report`) when it is not known.
    std::optional<StructLayout> resolve(std::size_t begin, std::size_t end, const std::string& owner, bool report,
                                        const std::string& prefix = "")
    {
        std::vector<std::string> words;
        std::string spelled;
        Tokens kept;
        for (std::size_t k = begin; k < end; ++k) {
            if (identifier(k) && skipped_words().count(t_[k].text)) continue;
            kept.push_back(t_[k]);
            if (identifier(k)) words.push_back(t_[k].text);
            bool glue = spelled.empty() || is(k, "::") || is(k, "<") || is(k, ">") || is(k, ",") ||
                        spelled.back() == ':' || spelled.back() == '<';
            spelled += (glue ? "" : " ") + t_[k].text;
        }
        if (auto builtin = arithmetic(words)) return builtin;
        std::string plain = spelled.rfind("::", 0) == 0 ? spelled.substr(2) : spelled;
        for (const char* library : {"std::", "cuda::std::"})
            if (plain.rfind(library, 0) == 0) plain = plain.substr(std::string(library).size());
        if (auto integer = library_integer(plain)) return integer;
        for (const std::string& name : {prefix + spelled, spelled, plain}) {
            auto found = types_.find(name);
            if (found != types_.end()) return found->second;
        }
        if (unreadable_.count(plain)) {
            if (report) problem(begin, owner + "its type " + spelled + " cannot be laid out (see its own error)");
            return std::nullopt;
        }
        try {  // cunumpy's array views and complex types, as the runtime packs them
            KernelParameter parameter = type_kernel_parameter("member", kept, "");
            if (parameter.kind != ParameterKind::structure) return struct_layout({parameter});
        } catch (const Error&) {
        }
        if (report)
            problem(begin, owner + "unknown type '" + spelled +
                               "'; use a C scalar type, a pointer, or a struct or enum this header defines before");
        return std::nullopt;
    }

    // One declaration at namespace or struct scope; `body`: the struct or
    // union being read (nothing at namespace scope, where only types count).
    // Returns the index after it.
    std::size_t declaration(std::size_t i, std::size_t end, const std::string& prefix, Body* body)
    {
        if (t_[i].kind == CppToken::Kind::directive) return after_directive(i);
        if (is(i, ";")) return i + 1;
        if ((word(i, "public") || word(i, "private") || word(i, "protected")) && is(i + 1, ":")) return i + 2;
        if (word(i, "template")) return templated(i, end, body);
        if (word(i, "using")) return alias(i, end, prefix);
        if (word(i, "typedef")) return typedef_declaration(i, end, prefix);
        if (word(i, "static_assert") || word(i, "friend") || word(i, "static") || word(i, "constexpr"))
            return after_statement(i, end);
        std::string owner = body ? prefix.substr(0, prefix.size() - 2) : "";
        std::string said = owner.empty() ? "" : "struct " + owner + ": ";
        std::size_t alignment = 1;
        std::size_t j = i;
        for (;;) {
            if (alignment_word(j)) {
                if (!alignment_specifier(j, alignment, said)) return fail(body, after_statement(j, end));
            } else if (word(j, "const") || word(j, "volatile") || word(j, "mutable") || word(j, "__device__") ||
                       word(j, "__host__") || word(j, "inline")) {
                ++j;
            } else {
                break;
            }
        }
        if (word(j, "virtual")) {
            problem(j, said + "a virtual function (a vtable pointer in the layout); kernels take plain structs");
            return fail(body, after_statement(j, end));
        }
        if (aggregate_word(j)) {
            Aggregate nested = aggregate(j, prefix);
            if (nested.definition) {
                if (body && !nested.layout) body->ok = false;
                return members_after(nested, end, body, alignment, said);
            }
        }
        if (word(j, "enum")) {
            std::optional<StructLayout> type;
            std::string name;
            std::size_t next = enumeration(j, end, prefix, type, name);
            if (is(next, ";")) return next + 1;
            if (!body) return after_statement(next, end);
            return declarators(next, end, said, type, next, alignment, body, true);
        }
        if (is_function(j, end)) return after_statement(j, end);
        if (!body) return after_statement(j, end);
        return data_member(j, end, said, prefix, alignment, body);
    }

    std::size_t fail(Body* body, std::size_t next)
    {
        if (body) body->ok = false;
        return next;
    }

    // A declaration whose first `(` at the top level, before any `=`, follows a name: a function.
    bool is_function(std::size_t i, std::size_t end) const
    {
        for (std::size_t k = i; k < end && !is(k, ";") && !is(k, "=") && !is(k, "{"); ++k) {
            if (word(k, "operator")) return true;
            if (!is(k, "(")) continue;
            if (is(k + 1, "*") || is(k + 1, "&")) return false;  // a function pointer: a member, refused as one
            if (k > i && (word(k - 1, "alignas") || word(k - 1, "__align__") || word(k - 1, "__attribute__") ||
                          word(k - 1, "decltype") || word(k - 1, "__declspec")))
                return false;
            return k > i && (identifier(k - 1) || is(k - 1, ">") || is(k - 1, "~"));
        }
        return false;
    }

    // A struct, class or union at `i`: its definition (laid out), or a use.
    Aggregate aggregate(std::size_t i, const std::string& prefix)
    {
        Aggregate result;
        bool is_union = word(i, "union");
        std::size_t alignment = 1;
        std::size_t j = i + 1;
        // Named in errors about the attributes before its name too
        // (`struct __attribute__((packed)) Args`).
        std::size_t name_at = j;
        while (alignment_word(name_at)) name_at = after_closer(name_at + 1);
        std::string named = identifier(name_at) && !word(name_at, "final") ? t_[name_at].text : "(anonymous)";
        std::string said = t_[i].text + " " + named + ": ";
        while (alignment_word(j))
            if (!alignment_specifier(j, alignment, said)) break;
        if (identifier(j) && !word(j, "final")) result.name = t_[j++].text;
        said = t_[i].text + " " + (result.name.empty() ? "(anonymous)" : result.name) + ": ";
        if (word(j, "final")) ++j;
        if (is(j, ":")) {
            result.definition = true;
            problem(j, said + "a base class; kernels take plain structs (write its members out)");
            while (j < t_.size() && !is(j, "{") && !is(j, ";")) ++j;
            result.end = is(j, "{") ? after_closer(j) : j;
            unreadable_.insert(result.name);
            return result;
        }
        if (!is(j, "{")) {
            result.end = j;
            return result;
        }
        result.definition = true;
        std::size_t close = after_closer(j);
        Body body;
        std::string inner = prefix + (result.name.empty() ? "(anonymous)" : result.name) + "::";
        for (std::size_t k = j + 1; k + 1 < close;) k = std::max(declaration(k, close - 1, inner, &body), k + 1);
        result.end = close;
        while (alignment_word(result.end))
            if (!alignment_specifier(result.end, alignment, said)) body.ok = false;
        if (!body.ok) {
            unreadable_.insert(result.name);
            return result;
        }
        result.layout = lay_out(body, is_union, alignment, result.offsets);
        if (!result.name.empty()) {
            define(prefix, result.name, *result.layout);
            record(prefix, result.name, t_[i].line, *result.layout, result.offsets);
        }
        return result;
    }

    void record(const std::string& prefix, const std::string& name, int line, const StructLayout& layout,
                const std::vector<std::pair<std::string, std::size_t>>& offsets)
    {
        out_.structs.push_back({name, prefix + name, where_(line), layout, offsets});
    }

    StructLayout lay_out(const Body& body, bool is_union, std::size_t alignment,
                         std::vector<std::pair<std::string, std::size_t>>& offsets) const
    {
        StructLayout layout{0, alignment};
        for (const auto& member : body.members) {
            std::size_t offset = is_union ? 0 : aligned(layout.size, member.layout.alignment);
            std::size_t bytes = member.layout.size * member.count;
            if (!member.name.empty()) offsets.push_back({member.name, offset});
            for (const auto& [name, inner] : member.inner) offsets.push_back({name, offset + inner});
            layout.size = is_union ? std::max(layout.size, bytes) : offset + bytes;
            layout.alignment = std::max(layout.alignment, member.layout.alignment);
        }
        layout.size = aligned(std::max<std::size_t>(layout.size, 1), layout.alignment);  // C++: never 0
        return layout;
    }

    // The members a struct or union definition declares after its `}`: none
    // (a type), an anonymous member (its members the outer struct's), or named ones.
    std::size_t members_after(const Aggregate& nested, std::size_t end, Body* body, std::size_t alignment,
                              const std::string& said)
    {
        std::size_t next = nested.end;
        if (is(next, ";")) {
            if (body && nested.name.empty() && nested.layout) {
                MemberLayout anonymous{"", *nested.layout, 1, nested.offsets};
                anonymous.layout.alignment = std::max(anonymous.layout.alignment, alignment);
                body->members.push_back(anonymous);
            }
            return next + 1;
        }
        if (!body) return after_statement(next, end);
        return declarators(next, end, said, nested.layout, next, alignment, body, true);
    }

    // `enum [class] [Name] [: type] {...}` at `i`: its layout in `type`; the
    // index after it, or `i` when it is no enum definition nor a use.
    std::size_t enumeration(std::size_t i, std::size_t end, const std::string& prefix,
                            std::optional<StructLayout>& type, std::string& name)
    {
        std::size_t j = i + 1;
        if (word(j, "class") || word(j, "struct")) ++j;
        if (identifier(j)) name = t_[j++].text;
        type = StructLayout{4, 4};  // int, unless a type is fixed
        if (is(j, ":")) {
            std::size_t begin = ++j;
            while (j < end && !is(j, "{") && !is(j, ";")) ++j;
            type = resolve(begin, j, "enum " + name + ": ", true);
        } else if (!is(j, "{") && !is(j, ";")) {  // a use: `enum E e;`
            type = resolve(j - 1, j, "", true, prefix);
            return j;
        }
        if (is(j, "{")) j = after_closer(j);
        if (type && !name.empty()) define(prefix, name, *type);
        return j;
    }

    // `using X = type;` (and `using namespace`, `using Base::name`: nothing).
    std::size_t alias(std::size_t i, std::size_t end, const std::string& prefix)
    {
        std::size_t next = after_statement(i, end);
        if (!identifier(i + 1) || !is(i + 2, "=")) return next;
        std::size_t last = next - 1;  // the `;`
        bool pointer = false;
        for (std::size_t k = i + 3; k < last; ++k) pointer = pointer || is(k, "*");
        if (auto type =
                pointer ? std::optional<StructLayout>(StructLayout{8, 8}) : resolve(i + 3, last, "", false, prefix))
            define(prefix, t_[i + 1].text, *type);
        return next;
    }

    // `typedef struct [X] {...} Y, *PY;`, `typedef unsigned long long u64;`, ...
    std::size_t typedef_declaration(std::size_t i, std::size_t end, const std::string& prefix)
    {
        std::size_t j = i + 1;
        while (word(j, "const") || word(j, "volatile")) ++j;
        Body names;
        std::size_t next;
        std::optional<StructLayout> type;
        std::string named;
        std::vector<std::pair<std::string, std::size_t>> offsets;
        if (aggregate_word(j) && (is(j + 1, "{") || is(j + 2, "{") || alignment_word(j + 1))) {
            Aggregate defined = aggregate(j, prefix);
            type = defined.layout;
            offsets = defined.offsets;
            named = defined.name;
            next = declarators(defined.end, end, "", type, defined.end, 1, &names, false);
        } else if (word(j, "enum") && (is(j + 1, "{") || is(j + 2, "{") || is(j + 2, ":"))) {
            std::size_t after = enumeration(j, end, prefix, type, named);
            next = declarators(after, end, "", type, after, 1, &names, false);
        } else {
            next = type_and_declarators(j, end, "", prefix, 1, &names, false);
        }
        if (!names.ok) return next;
        for (const auto& alias : names.members) {
            StructLayout layout{alias.layout.size * alias.count, alias.layout.alignment};
            if (alias.name == named) continue;
            define(prefix, alias.name, layout);
            if (alias.count == 1 && !alias.pointer && type && !offsets.empty())
                record(prefix, alias.name, t_[i].line, layout, offsets);
        }
        return next;
    }

    std::size_t data_member(std::size_t i, std::size_t end, const std::string& said, const std::string& prefix,
                            std::size_t alignment, Body* body)
    {
        return type_and_declarators(i, end, said, prefix, alignment, body, true);
    }

    // `<type> <declarator>, <declarator>;` at `i`.
    std::size_t type_and_declarators(std::size_t i, std::size_t end, const std::string& said, const std::string& prefix,
                                     std::size_t alignment, Body* body, bool report)
    {
        // The first declarator's name: the last identifier before its array bounds, bit width or initialiser.
        std::size_t stop = i, name = end;
        int angle = 0;
        while (stop < end && !is(stop, ";") &&
               !(angle == 0 && (is(stop, ",") || is(stop, "[") || is(stop, ":") || is(stop, "=") || is(stop, "{") ||
                                is(stop, "(")))) {
            if (alignment_word(stop)) {
                if (!alignment_specifier(stop, alignment, said)) return fail(body, after_statement(stop, end));
                continue;
            }
            angle += is(stop, "<") ? 1 : is(stop, ">") ? -1 : is(stop, ">>") ? -2 : 0;
            if (angle == 0 && identifier(stop) && !skipped_words().count(t_[stop].text)) name = stop;
            ++stop;
        }
        if (name == end || is(stop, "(")) {
            if (report)
                problem(i, said +
                               "a member that is not '<type> <name>;' (a parenthesized declarator such as a "
                               "function pointer, or no name); use a plain pointer such as void*");
            return fail(body, after_statement(i, end));
        }
        std::size_t type_end = i;
        while (type_end < name && !is(type_end, "*") && !is(type_end, "&") && !is(type_end, "&&")) ++type_end;
        std::optional<StructLayout> type = resolve(i, type_end, said, false, prefix);
        return declarators(type_end, end, said, type, i, alignment, body, report);
    }

    // Declarators at `i`, each `* const* name[N][M] = init`, up to the `;`: members of `body`.
    // A missing type is reported (`report`) when its tokens are [type_at, i).
    std::size_t declarators(std::size_t i, std::size_t end, const std::string& said, std::optional<StructLayout> type,
                            std::size_t type_at, std::size_t alignment, Body* body, bool report)
    {
        std::size_t j = i;
        while (j < end) {
            std::size_t pointers = 0;
            while (is(j, "*") || word(j, "const") || word(j, "volatile") || word(j, "__restrict__") ||
                   word(j, "__restrict") || word(j, "restrict"))
                pointers += is(j++, "*") ? 1 : 0;
            if (is(j, "&") || is(j, "&&")) {
                problem(j, said + "a reference member; use a pointer");
                return fail(body, after_statement(j, end));
            }
            if (!identifier(j)) {
                problem(j, said +
                               "a declarator that is not a name (a function pointer or a parenthesized "
                               "declarator); use a plain pointer such as void*");
                return fail(body, after_statement(j, end));
            }
            std::string name = t_[j++].text;
            std::size_t count = 1;
            while (is(j, "[")) {
                std::size_t close = after_closer(j);
                auto bound = constant(j + 1, close - 1);
                if (!bound) {
                    problem(j, said + "member '" + name + "': an array bound that is not a number; write the number");
                    return fail(body, after_statement(j, end));
                }
                count *= *bound;
                j = close;
            }
            std::size_t member_alignment = alignment;
            while (alignment_word(j))
                if (!alignment_specifier(j, member_alignment, said)) return fail(body, after_statement(j, end));
            if (is(j, ":")) {
                problem(j, said + "member '" + name +
                               "' is a bit-field, whose layout the compiler chooses; use a whole integer member");
                return fail(body, after_statement(j, end));
            }
            if (is(j, "=")) {
                while (j < end && !is(j, ",") && !is(j, ";"))
                    j = is(j, "(") || is(j, "{") || is(j, "[") ? after_closer(j) : j + 1;
            } else if (is(j, "{")) {
                j = after_closer(j);
            }
            std::optional<StructLayout> layout = pointers ? std::optional<StructLayout>(StructLayout{8, 8}) : type;
            if (!layout && body) {
                if (report && type_at < i) resolve(type_at, i, said + "member '" + name + "': ", true);
                return fail(body, after_statement(j, end));
            } else if (body) {
                StructLayout member = *layout;
                member.alignment = std::max(member.alignment, member_alignment);
                body->members.push_back({name, member, count, {}, pointers > 0});
            }
            if (is(j, ",")) {
                ++j;
                continue;
            }
            return is(j, ";") ? j + 1 : after_statement(j, end);
        }
        return end;
    }
};

}  // namespace

std::string UnreadableStruct::message() const
{
    return where + ": " + what +
           " (the struct check lays out plain C structs only, and refuses what it cannot lay out rather than "
           "guess)";
}

StructReading read_structs(const Tokens& tokens, const std::function<std::string(int line)>& where)
{
    return Reader(tokens, where).read();
}

}  // namespace ck
