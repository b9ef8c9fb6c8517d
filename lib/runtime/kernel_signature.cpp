#include "runtime/kernel_signature.hpp"

#include "cunumpy_kernels/error.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace ck {

namespace {

const std::map<std::string, ElementType>& c_types()
{
    static const std::map<std::string, ElementType> types = {
        {"bool", ElementType::boolean},
        {"char", ElementType::int8},
        {"signed char", ElementType::int8},
        {"unsigned char", ElementType::uint8},
        {"short", ElementType::int16},
        {"short int", ElementType::int16},
        {"unsigned short", ElementType::uint16},
        {"unsigned short int", ElementType::uint16},
        {"int", ElementType::int32},
        {"signed", ElementType::int32},
        {"signed int", ElementType::int32},
        {"unsigned", ElementType::uint32},
        {"unsigned int", ElementType::uint32},
        {"long", ElementType::int64},
        {"long int", ElementType::int64},
        {"long long", ElementType::int64},
        {"long long int", ElementType::int64},
        {"unsigned long", ElementType::uint64},
        {"unsigned long int", ElementType::uint64},
        {"unsigned long long", ElementType::uint64},
        {"unsigned long long int", ElementType::uint64},
        {"int8_t", ElementType::int8},
        {"int16_t", ElementType::int16},
        {"int32_t", ElementType::int32},
        {"int64_t", ElementType::int64},
        {"uint8_t", ElementType::uint8},
        {"uint16_t", ElementType::uint16},
        {"uint32_t", ElementType::uint32},
        {"uint64_t", ElementType::uint64},
        {"size_t", ElementType::uint64},
        {"ptrdiff_t", ElementType::int64},
        {"ssize_t", ElementType::int64},
        {"float", ElementType::float32},
        {"double", ElementType::float64},
        {"complex<float>", ElementType::complex64},
        {"complex<double>", ElementType::complex128},
    };
    return types;
}

bool is_qualifier(const std::string& word)
{
    return word == "const" || word == "volatile" || word == "__restrict__" || word == "__restrict" ||
           word == "restrict" || word == "struct";
}

bool identifier_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Comments become spaces (newlines kept, so lines still count); string and
// character literals are kept as they are.
std::string strip_comments(const std::string& source)
{
    std::string out = source;
    for (std::size_t i = 0; i < out.size(); ++i) {
        char c = out[i];
        if (c == '"' || c == '\'') {
            for (++i; i < out.size() && out[i] != c; ++i)
                if (out[i] == '\\') ++i;
        } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
            for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
        } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
            std::size_t end = out.find("*/", i + 2);
            end = end == std::string::npos ? out.size() : end + 2;
            for (; i < end; ++i)
                if (out[i] != '\n') out[i] = ' ';
            --i;
        }
    }
    return out;
}

int line_of(const std::string& text, std::size_t position)
{
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(position), '\n'));
}

std::vector<std::string> split_top_level(const std::string& text, char separator)
{
    std::vector<std::string> parts;
    int depth = 0;
    std::string current;
    char quote = 0;
    for (char c : text) {
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '<' || c == '(' || c == '[' || c == '{') {
            ++depth;
        } else if (c == '>' || c == ')' || c == ']' || c == '}') {
            --depth;
        } else if (c == separator && depth == 0) {
            parts.push_back(current);
            current.clear();
            continue;
        }
        current += c;
    }
    parts.push_back(current);
    return parts;
}

std::string trim(const std::string& text)
{
    auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// Words of a declaration: identifiers, `*`, `&`, and `<...>` groups glued to
// the identifier before them ("Array2D<const double>" is one word).
std::vector<std::string> words_of(const std::string& text)
{
    std::vector<std::string> words;
    for (std::size_t i = 0; i < text.size();) {
        char c = text[i];
        if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
        if (c == '*' || c == '&' || c == '[' || c == ']') { words.emplace_back(1, c); ++i; continue; }
        if (c == '<' && !words.empty()) {
            int depth = 0;
            std::size_t j = i;
            for (; j < text.size(); ++j) {
                if (text[j] == '<') ++depth;
                if (text[j] == '>' && --depth == 0) break;
            }
            words.back() += text.substr(i, j + 1 - i);
            i = j + 1;
            continue;
        }
        if (identifier_char(c) || c == ':') {
            std::size_t j = i;
            while (j < text.size() && (identifier_char(text[j]) || text[j] == ':')) ++j;
            words.push_back(text.substr(i, j - i));
            i = j;
            continue;
        }
        words.emplace_back(1, c);
        ++i;
    }
    return words;
}

// "Array2D< const double >" -> kind, ndim, element type; "complex<double>" etc.
bool parse_view(const std::string& word, KernelParameter& parameter)
{
    bool contiguous = word.rfind("CArray", 0) == 0;
    std::size_t at = contiguous ? 6 : word.rfind("Array", 0) == 0 ? 5 : std::string::npos;
    if (at == std::string::npos) return false;
    std::size_t d = word.find("D<", at);
    if (d == std::string::npos || d == at) return false;
    std::string digits = word.substr(at, d - at);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return false;
    std::string inner = word.substr(d + 2, word.size() - d - 3);
    std::string element;
    for (const auto& w : words_of(inner))
        if (!is_qualifier(w)) element += (element.empty() ? "" : " ") + w;
    auto found = c_types().find(element);
    parameter.view_ndim = std::stoi(digits);
    if (found == c_types().end() || parameter.view_ndim < 1 || parameter.view_ndim > 16) return false;
    parameter.kind = contiguous ? ParameterKind::carray_view : ParameterKind::array_view;
    parameter.element = found->second;
    return true;
}

std::string normalize_complex(const std::string& word)
{
    for (const char* prefix : {"thrust::", "cuda::std::", "std::"})
        if (word.rfind(prefix, 0) == 0) return normalize_complex(word.substr(std::string(prefix).size()));
    if (word.rfind("complex<", 0) != 0) return word;
    std::string inner;
    for (const auto& w : words_of(word.substr(8, word.size() - 9))) inner += w;
    return "complex<" + inner + ">";
}

KernelParameter parse_parameter(const std::string& declaration, const std::string& where)
{
    std::string text = trim(split_top_level(declaration, '=')[0]);
    int pointers = 0;
    std::vector<std::string> words;
    for (const auto& word : words_of(text)) {
        if (word == "*" || word == "[") ++pointers;
        else if (word == "&") throw SourceError(where + ": kernel parameter '" + text + "' is a reference; kernels take values and pointers");
        else if (word != "]" && !is_qualifier(word)) words.push_back(normalize_complex(word));
    }
    if (words.size() < 2) throw SourceError(where + ": cannot read the kernel parameter '" + text + "' (a type and a name are needed)");
    KernelParameter parameter;
    parameter.name = words.back();
    words.pop_back();
    for (const auto& w : words) parameter.ctype += (parameter.ctype.empty() ? "" : " ") + w;
    auto unsupported = [&](const std::string& why) {
        return SourceError(where + ": cannot check the kernel parameter '" + text + "': " + why);
    };
    if (parse_view(parameter.ctype, parameter)) {
        if (pointers) throw unsupported("array views are passed by value");
        return parameter;
    }
    if (parameter.ctype.find('<') != std::string::npos && c_types().count(parameter.ctype) == 0)
        throw unsupported("unsupported template type " + parameter.ctype);
    if (parameter.ctype == "void" && pointers == 1) {
        parameter.kind = ParameterKind::void_pointer;
        return parameter;
    }
    if (pointers > 1) throw unsupported("pointers to pointers are not supported");
    auto found = c_types().find(parameter.ctype);
    if (found != c_types().end()) {
        parameter.kind = pointers ? ParameterKind::pointer : ParameterKind::scalar;
        parameter.element = found->second;
        return parameter;
    }
    if (pointers) throw unsupported("a pointer to " + parameter.ctype + "; structs are passed by value");
    parameter.kind = ParameterKind::structure;
    return parameter;
}

struct Declaration {
    std::size_t global_at = 0;
    std::size_t open_paren = 0;
    std::size_t close_paren = 0;
    bool definition = false;
    bool is_template = false;
};

// The declaration of `name` starting at `__global__` (at `at`), if it is one.
std::optional<Declaration> declaration_at(const std::string& code, std::size_t at, const std::string& name)
{
    Declaration d;
    d.global_at = at;
    std::size_t i = at + 10;
    bool seen_void = false;
    while (i < code.size()) {
        while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
        std::size_t start = i;
        while (i < code.size() && identifier_char(code[i])) ++i;
        std::string word = code.substr(start, i - start);
        if (word.empty()) return std::nullopt;
        while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
        if (word == "void") { seen_void = true; continue; }
        if (i < code.size() && code[i] == '(' && word == "__launch_bounds__") {
            i = code.find(')', i);
            if (i == std::string::npos) return std::nullopt;
            ++i;
            continue;
        }
        if (i < code.size() && code[i] == '(') {
            if (word != name || !seen_void) return std::nullopt;
            d.open_paren = i;
            break;
        }
        if (word != "static" && word != "inline" && word != "__noinline__" && word != "__forceinline__") return std::nullopt;
    }
    if (d.open_paren == 0) return std::nullopt;
    int depth = 0;
    for (std::size_t j = d.open_paren; j < code.size(); ++j) {
        if (code[j] == '(') ++depth;
        if (code[j] == ')' && --depth == 0) { d.close_paren = j; break; }
    }
    if (d.close_paren == 0) return std::nullopt;
    std::size_t after = code.find_first_not_of(" \t\r\n", d.close_paren + 1);
    d.definition = after != std::string::npos && code[after] == '{';
    std::size_t statement_start = code.find_last_of(";}", at);
    statement_start = statement_start == std::string::npos ? 0 : statement_start + 1;
    std::string before = code.substr(statement_start, at - statement_start);
    auto t = before.find("template");
    d.is_template = t != std::string::npos && (t == 0 || !identifier_char(before[t - 1])) &&
                    (t + 8 >= before.size() || !identifier_char(before[t + 8]));
    return d;
}

std::optional<Declaration> find_declaration(const std::string& code, const std::string& name)
{
    std::optional<Declaration> chosen;
    for (std::size_t at = code.find("__global__"); at != std::string::npos; at = code.find("__global__", at + 10)) {
        if ((at > 0 && identifier_char(code[at - 1])) || (at + 10 < code.size() && identifier_char(code[at + 10])))
            continue;
        auto d = declaration_at(code, at, name);
        if (!d) continue;
        if (d->definition) return d;
        if (!chosen) chosen = d;
    }
    return chosen;
}

}  // namespace

std::size_t KernelParameter::packed_size() const
{
    switch (kind) {
    case ParameterKind::scalar: return size_of(element);
    case ParameterKind::pointer:
    case ParameterKind::void_pointer: return sizeof(void*);
    case ParameterKind::array_view: return 8 * (1 + 2 * static_cast<std::size_t>(view_ndim));
    case ParameterKind::carray_view: return 8 * (1 + static_cast<std::size_t>(view_ndim));
    case ParameterKind::structure: return 0;
    }
    return 0;
}

std::string describe_parameter(const KernelParameter& parameter, std::size_t index)
{
    bool pointer = parameter.kind == ParameterKind::pointer || parameter.kind == ParameterKind::void_pointer;
    return "argument " + std::to_string(index) + " (" + parameter.ctype + (pointer ? "* " : " ") + parameter.name + ")";
}

GlobalSignature read_global_signature(const std::string& source, const std::string& name, const std::filesystem::path& file)
{
    std::string code = strip_comments(source);
    auto declaration = find_declaration(code, name);
    if (!declaration)
        throw SourceError(file.string() + ": no __global__ void " + name + "(...) found; the kernel's entry must have the folder's name");
    GlobalSignature signature;
    signature.line = line_of(code, declaration->global_at);
    std::string where = file.string() + ":" + std::to_string(signature.line);
    if (declaration->is_template)
        throw SourceError(where + ": __global__ " + name + " is a template; the runtime launches only non-template entries");
    std::string list = trim(code.substr(declaration->open_paren + 1, declaration->close_paren - declaration->open_paren - 1));
    if (list.empty() || list == "void") return signature;
    for (const auto& part : split_top_level(list, ','))
        signature.parameters.push_back(parse_parameter(part, where));
    return signature;
}

std::optional<std::vector<std::string>> read_python_parameters(const std::string& source, const std::string& name)
{
    std::string pattern = "def " + name;
    for (std::size_t at = source.find(pattern); at != std::string::npos; at = source.find(pattern, at + 1)) {
        if (at > 0 && source[at - 1] != '\n') continue;  // top level only
        std::size_t open = source.find_first_not_of(" \t", at + pattern.size());
        if (open == std::string::npos || source[open] != '(') continue;
        int depth = 0;
        std::size_t close = open;
        char quote = 0;
        for (; close < source.size(); ++close) {
            char c = source[close];
            if (quote) { if (c == quote) quote = 0; continue; }
            if (c == '"' || c == '\'') quote = c;
            else if (c == '(' || c == '[') ++depth;
            else if ((c == ')' || c == ']') && --depth == 0) break;
        }
        std::vector<std::string> names;
        for (const auto& part : split_top_level(source.substr(open + 1, close - open - 1), ',')) {
            std::string parameter = trim(split_top_level(split_top_level(part, ':')[0], '=')[0]);
            if (parameter.empty() || parameter == "/") continue;
            if (parameter[0] == '*') break;  // keyword-only parameters follow
            names.push_back(parameter);
        }
        return names;
    }
    return std::nullopt;
}

}  // namespace ck
