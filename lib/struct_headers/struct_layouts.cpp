#include "struct_headers/struct_layouts.hpp"

#include "cunumpy_kernels/error.hpp"
#include "source/cpp_lexer.hpp"
#include "util/file_util.hpp"

#include <map>

namespace ck {

namespace {

using signatures::CppToken;

bool is(const CppToken& token, const char* text)
{
    return token.kind == CppToken::Kind::punctuator && token.text == text;
}

// The fields between `begin` (after `{`) and the closing `}`: each the
// tokens up to a `;`, its last identifier the name. Nothing when a field is
// not `<type> <name>;` at the top level.
std::optional<std::vector<KernelParameter>> fields(const std::vector<CppToken>& tokens, std::size_t begin,
                                                   std::size_t end, const std::string& where,
                                                   const StructLayouts& known)
{
    std::vector<KernelParameter> result;
    std::vector<CppToken> field;
    for (std::size_t i = begin; i < end; ++i) {
        const CppToken& t = tokens[i];
        if (is(t, "{") || is(t, ":") || is(t, "(") || is(t, "[") || t.kind == CppToken::Kind::directive)
            return std::nullopt;
        if (!is(t, ";")) {
            field.push_back(t);
            continue;
        }
        if (field.size() < 2 || field.back().kind != CppToken::Kind::identifier) return std::nullopt;
        std::string name = field.back().text;
        field.pop_back();
        try {
            result.push_back(type_kernel_parameter(name, field, where));
        } catch (const Error&) {
            return std::nullopt;
        }
        if (result.back().kind == ParameterKind::structure && !known.count(result.back().ctype)) return std::nullopt;
        field.clear();
    }
    if (!field.empty()) return std::nullopt;
    return result;
}

}  // namespace

StructLayouts read_struct_layouts(const std::string& text, const std::filesystem::path& file)
{
    StructLayouts layouts;
    std::vector<CppToken> tokens = signatures::lex_cpp(text);
    for (std::size_t i = 0; i + 2 < tokens.size(); ++i) {
        if (tokens[i].kind != CppToken::Kind::identifier || tokens[i].text != "struct") continue;
        if (tokens[i + 1].kind != CppToken::Kind::identifier || !is(tokens[i + 2], "{")) continue;
        std::size_t close = i + 3;
        while (close < tokens.size() && !is(tokens[close], "}")) ++close;
        if (close == tokens.size()) break;
        std::string where = file.string() + ":" + std::to_string(tokens[i].line);
        if (auto members = fields(tokens, i + 3, close, where, layouts))
            if (auto layout = struct_layout(*members, layouts)) layouts[tokens[i + 1].text] = *layout;
        i = close;
    }
    return layouts;
}

ConfiguredStructs read_configured_structs(const Config& config)
{
    ConfiguredStructs structs;
    std::map<std::string, std::filesystem::path> defined_in;
    for (const auto& [header, writer] : config.struct_headers) {
        std::string text;
        try {
            text = util::read_file(header);
        } catch (const Error& error) {
            throw SourceError(header.string() + ": cannot read the struct header that struct-headers names (" +
                              error.what() + "); write it with " + writer);
        }
        for (auto& [name, layout] : read_struct_layouts(text, header)) {
            auto [first, added] = defined_in.emplace(name, header);
            if (added)
                structs.layouts[name] = layout;
            else
                structs.duplicates.push_back({name, first->second, header});
        }
    }
    return structs;
}

std::string DuplicateStruct::message() const
{
    return "struct " + name + " is defined by both " + first.string() + " and " + second.string() +
           " (struct-headers): a kernel taking " + name +
           " by value could be packed with either layout; rename one of them";
}

StructLayouts configured_struct_layouts(const Config& config)
{
    ConfiguredStructs structs = read_configured_structs(config);
    if (!structs.duplicates.empty()) throw SourceError(structs.duplicates.front().message());
    return structs.layouts;
}

}  // namespace ck
