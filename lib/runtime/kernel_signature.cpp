#include "runtime/kernel_signature.hpp"

#include "cunumpy_kernels/error.hpp"
#include "source/cpp_lexer.hpp"
#include "signatures/cuda_signature_reader.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace ck {

namespace {

using signatures::CppToken;

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
           word == "restrict" || word == "struct" || word == "__grid_constant__" || word == "register";
}

bool is(const CppToken& token, const char* text)
{
    return token.kind == CppToken::Kind::punctuator && token.text == text;
}

// The closer of the bracket at `open` (`<` counts only with `<` and `>`).
std::size_t closer(const std::vector<CppToken>& tokens, std::size_t open)
{
    const bool angle = is(tokens[open], "<");
    int depth = 0;
    for (std::size_t i = open; i < tokens.size(); ++i) {
        const CppToken& t = tokens[i];
        if (angle ? is(t, "<") : is(t, "(") || is(t, "[")) ++depth;
        if ((angle ? is(t, ">") : is(t, ")") || is(t, "]")) && --depth == 0) return i;
    }
    return tokens.size();
}

// A parameter's type as the lexer gives it, without its name: qualifiers
// dropped, `::` and template arguments glued ("std::complex<double>",
// "Array2D<double>"), pointer and array marks counted at the top level.
struct TypeReading {
    std::string ctype;
    int pointers = 0;
    bool reference = false;
    bool parenthesized = false;  ///< a function pointer or a parenthesized declarator
};

std::string spell_type(const std::vector<CppToken>& tokens, std::size_t begin, std::size_t end, TypeReading* top)
{
    std::string text;
    for (std::size_t i = begin; i < end; ++i) {
        const CppToken& t = tokens[i];
        if (t.kind == CppToken::Kind::identifier && is_qualifier(t.text)) continue;
        if (top && (is(t, "*") || is(t, "["))) {
            ++top->pointers;
            if (is(t, "[")) i = std::min(closer(tokens, i), end);
            continue;
        }
        if (top && (is(t, "&") || is(t, "&&"))) {
            top->reference = true;
            continue;
        }
        if (top && is(t, "(")) {
            top->parenthesized = true;
            i = std::min(closer(tokens, i), end);
            continue;
        }
        if (is(t, "<")) {
            std::size_t close = std::min(closer(tokens, i), end);
            text += "<" + spell_type(tokens, i + 1, close, nullptr) + ">";
            i = close;
            continue;
        }
        bool word = t.kind == CppToken::Kind::identifier || t.kind == CppToken::Kind::number;
        bool after_word =
            !text.empty() && (std::isalnum(static_cast<unsigned char>(text.back())) || text.back() == '_');
        text += (word && after_word ? " " : "") + t.text;
    }
    return text;
}

std::string normalize_complex(const std::string& word)
{
    for (const char* prefix : {"::", "thrust::", "cuda::std::", "std::"})
        if (word.rfind(prefix, 0) == 0) return normalize_complex(word.substr(std::string(prefix).size()));
    return word;
}

// "Array2D<double>", "CArray3D<float>": kind, rank and element type.
bool parse_view(const std::string& ctype, KernelParameter& parameter)
{
    bool contiguous = ctype.rfind("CArray", 0) == 0;
    std::size_t at = contiguous ? 6 : ctype.rfind("Array", 0) == 0 ? 5 : std::string::npos;
    if (at == std::string::npos || ctype.back() != '>') return false;
    std::size_t d = ctype.find("D<", at);
    if (d == std::string::npos || d == at || d - at > 2) return false;
    std::string digits = ctype.substr(at, d - at);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return false;
    auto found = c_types().find(normalize_complex(ctype.substr(d + 2, ctype.size() - d - 3)));
    parameter.view_ndim = std::stoi(digits);
    if (found == c_types().end() || parameter.view_ndim < 1 || parameter.view_ndim > 16) return false;
    parameter.kind = contiguous ? ParameterKind::carray_view : ParameterKind::array_view;
    parameter.element = found->second;
    return true;
}

}  // namespace

KernelParameter type_kernel_parameter(const std::string& name, const std::vector<CppToken>& tokens,
                                      const std::string& where)
{
    TypeReading type;
    KernelParameter parameter;
    parameter.name = name;
    parameter.ctype = normalize_complex(spell_type(tokens, 0, tokens.size(), &type));
    if (parameter.ctype.rfind("::", 0) == 0) parameter.ctype.erase(0, 2);  // `::ns::Args` is `ns::Args`
    std::string text = parameter.ctype + std::string(static_cast<std::size_t>(type.pointers), '*') + " " + name;
    auto unsupported = [&](const std::string& why) {
        return SourceError(where + ": cannot check the kernel parameter '" + text + "': " + why);
    };
    if (type.reference)
        throw SourceError(where + ": kernel parameter '" + name + "' is a reference; kernels take values and pointers");
    if (type.parenthesized) throw unsupported("function pointers and parenthesized declarators are not supported");
    if (parse_view(parameter.ctype, parameter)) {
        if (type.pointers) throw unsupported("array views are passed by value");
        return parameter;
    }
    if (parameter.ctype.find('<') != std::string::npos && c_types().count(parameter.ctype) == 0)
        throw unsupported("unsupported template type " + parameter.ctype);
    if (parameter.ctype == "void" && type.pointers == 1) {
        parameter.kind = ParameterKind::void_pointer;
        return parameter;
    }
    if (type.pointers > 1) throw unsupported("pointers to pointers are not supported");
    auto found = c_types().find(parameter.ctype);
    if (found != c_types().end()) {
        parameter.kind = type.pointers ? ParameterKind::pointer : ParameterKind::scalar;
        parameter.element = found->second;
        return parameter;
    }
    if (type.pointers) throw unsupported("a pointer to " + parameter.ctype + "; structs are passed by value");
    if (parameter.ctype.empty() || parameter.ctype.find_first_of(" ,") != std::string::npos)
        throw unsupported("unknown type '" + parameter.ctype + "'");
    parameter.kind = ParameterKind::structure;
    return parameter;
}

namespace {

using Substitutions = std::map<std::string, std::vector<CppToken>>;

// The type parameters of a template and the tokens of their arguments.
Substitutions substitutions(const signatures::CudaDeclaration& declaration, const std::vector<std::string>& args)
{
    Substitutions map;
    const auto& parameters = declaration.template_parameters;
    for (std::size_t i = 0; i < parameters.size() && i < args.size(); ++i) {
        if (!parameters[i].is_type || parameters[i].name.empty()) continue;
        std::vector<CppToken> tokens = signatures::lex_cpp(args[i]);
        map[parameters[i].name] = std::move(tokens);
    }
    return map;
}

std::vector<CppToken> substituted(const std::vector<CppToken>& type, const Substitutions& map)
{
    if (map.empty()) return type;
    std::vector<CppToken> out;
    for (const auto& token : type) {
        auto found = token.kind == CppToken::Kind::identifier ? map.find(token.text) : map.end();
        if (found == map.end()) {
            out.push_back(token);
            continue;
        }
        for (CppToken replacement : found->second) {
            replacement.line = token.line;
            out.push_back(std::move(replacement));
        }
    }
    return out;
}

std::vector<KernelParameter> type_parameters(const signatures::CudaDeclaration& declaration, const std::string& where,
                                             const Substitutions& map = {})
{
    std::vector<KernelParameter> parameters;
    const auto& list = declaration.parameters;
    for (std::size_t i = 0; i < list.names.size(); ++i)
        parameters.push_back(type_kernel_parameter(list.names[i], substituted(list.types[i], map), where));
    return parameters;
}

bool same_types(const std::vector<KernelParameter>& a, const std::vector<KernelParameter>& b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const KernelParameter& x, const KernelParameter& y) {
        return x.kind == y.kind && x.element == y.element && x.view_ndim == y.view_ndim && x.ctype == y.ctype;
    });
}

}  // namespace

std::size_t KernelParameter::packed_size() const
{
    switch (kind) {
        case ParameterKind::scalar:
            return size_of(element);
        case ParameterKind::pointer:
        case ParameterKind::void_pointer:
            return sizeof(void*);
        case ParameterKind::array_view:
            return 8 * (1 + 2 * static_cast<std::size_t>(view_ndim));
        case ParameterKind::carray_view:
            return 8 * (1 + static_cast<std::size_t>(view_ndim));
        case ParameterKind::structure:
            return 0;
    }
    return 0;
}

std::string describe_parameter(const KernelParameter& parameter, std::size_t index)
{
    bool pointer = parameter.kind == ParameterKind::pointer || parameter.kind == ParameterKind::void_pointer;
    return "argument " + std::to_string(index) + " (" + parameter.ctype + (pointer ? "* " : " ") + parameter.name + ")";
}

GlobalSignature read_global_signature(const std::string& source, const std::string& name,
                                      const std::filesystem::path& file, const std::vector<std::string>& template_args,
                                      signatures::IncludeSource* includes)
{
    return global_signature_of(signatures::read_cuda_declaration(source, name, includes), name, file, template_args);
}

GlobalSignature global_signature_of(const signatures::CudaKernelDeclaration& found, const std::string& name,
                                    const std::filesystem::path& file, const std::vector<std::string>& template_args)
{
    std::string at = file.string() + (found.read.line ? ":" + std::to_string(found.read.line) : "");
    if (found.read.status != SignatureRead::Status::found) {
        std::string hint = found.read.status == SignatureRead::Status::not_found
                               ? "; the kernel's entry must be __global__ void " + name + "(...)"
                               : "";
        throw SourceError(at + ": " + found.read.reason + hint);
    }
    const auto& chosen = found.declarations[found.chosen];
    if (chosen.is_template && template_args.empty())
        throw SourceError(at + ": __global__ " + name +
                          " is a template without template arguments; set them in "
                          "[tool.cunumpy-kernels] template-args of the package's pyproject.toml");
    Substitutions map = chosen.is_template ? substitutions(chosen, template_args) : Substitutions{};
    GlobalSignature signature{type_parameters(chosen, at, map), found.read.line};
    // Definitions in two #if branches may agree on names and differ in
    // types: the launch cannot know which one was compiled.
    for (const auto& other : found.declarations) {
        if (&other == &chosen || !other.has_body) continue;
        std::string other_at = file.string() + ":" + std::to_string(other.line);
        if (!same_types(signature.parameters, type_parameters(other, other_at, map)))
            throw SourceError(other_at + ": this definition of " + name + " takes other parameter types than line " +
                              std::to_string(signature.line) + "; cannot tell which one is compiled (#if branches)");
    }
    return signature;
}

}  // namespace ck
