#include "struct_headers/struct_layouts.hpp"

#include "cunumpy_kernels/error.hpp"
#include "source/cpp_lexer.hpp"
#include "struct_headers/header_preprocessor.hpp"
#include "util/file_util.hpp"

#include <map>

namespace ck {

namespace {

StructLayouts layouts_of(const StructReading& reading)
{
    StructLayouts layouts;
    // Kernels name a struct as their code sees it: plain after a `using
    // namespace`, qualified otherwise (`ns::Args`).
    for (const auto& read : reading.structs) {
        layouts[read.name] = read.layout;
        layouts[read.qualified] = read.layout;
    }
    return layouts;
}

}  // namespace

StructLayouts read_struct_layouts(const std::string& text, const std::filesystem::path& file)
{
    return layouts_of(
        read_structs(signatures::lex_cpp(text), [&](int line) { return file.string() + ":" + std::to_string(line); }));
}

StructReading read_header_structs(const std::string& text, const std::filesystem::path& header, const Config& config)
{
    HeaderTokens tokens = header_tokens(text, header, config);
    auto where = [&](int line) {
        int in_header = tokens.lines.empty() ? line
                        : line >= 0 && static_cast<std::size_t>(line) < tokens.lines.size()
                            ? tokens.lines[static_cast<std::size_t>(line)]
                            : 0;
        return header.string() + ":" + std::to_string(in_header);
    };
    return read_structs(tokens.tokens, where);
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
        StructReading reading;
        try {
            reading = read_header_structs(text, header, config);
        } catch (const SourceError& error) {
            structs.unreadable.push_back({header, error.what()});
            continue;
        }
        for (const auto& problem : reading.problems) structs.unreadable.push_back({header, problem.message()});
        for (auto& [name, layout] : layouts_of(reading)) {
            auto [first, added] = defined_in.emplace(name, header);
            if (added)
                structs.layouts[name] = layout;
            else if (first->second != header)
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
    if (!structs.unreadable.empty()) throw SourceError(structs.unreadable.front().second);
    if (!structs.duplicates.empty()) throw SourceError(structs.duplicates.front().message());
    return structs.layouts;
}

}  // namespace ck
