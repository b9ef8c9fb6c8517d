// read_cuda_signature: lex, preprocess, scan, then decide what the
// declarations found say together.
#include "signatures/cuda_signature_reader.hpp"

#include "source/cpp_lexer.hpp"
#include "source/cpp_preprocessor.hpp"
#include "signatures/cuda_declaration_scanner.hpp"

#include <algorithm>

namespace ck {

namespace {

using signatures::CudaDeclaration;
using signatures::CudaKernelDeclaration;
using signatures::FunctionMacro;
using Status = SignatureRead::Status;

SignatureRead make(Status status, int line, std::string reason, std::vector<std::string> parameters = {})
{
    return {status, line, std::move(parameters), std::move(reason)};
}

std::string joined(const std::vector<std::string>& names)
{
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return "(" + text + ")";
}

bool declares_global(const FunctionMacro& macro)
{
    return std::find(macro.identifiers.begin(), macro.identifiers.end(), "__global__") != macro.identifiers.end();
}

bool mentions(const FunctionMacro& macro, std::string_view name)
{
    return std::find(macro.identifiers.begin(), macro.identifiers.end(), name) != macro.identifiers.end();
}

// No declaration: say whether a macro hides one, so that the user knows the
// kernel is there but cannot be read.
SignatureRead without_declaration(const signatures::CudaDeclarationScanner& scanner,
                                  const std::map<std::string, FunctionMacro>& macros, std::string_view name)
{
    std::string quoted = "'" + std::string(name) + "'";
    for (const auto& use : scanner.macro_uses()) {
        auto macro = macros.find(use.macro);
        if (macro != macros.end() && declares_global(macro->second))
            return make(Status::unreadable, use.line,
                        quoted + " is declared by the function-like macro " + use.macro + " (defined at " +
                            (macro->second.file.empty() ? "line " : macro->second.file + ":") +
                            std::to_string(macro->second.line) +
                            "); parameters a macro generates cannot be read: write the declaration out");
    }
    for (const auto& use : scanner.macro_uses())
        if (!macros.count(use.macro))
            return make(Status::unreadable, use.line,
                        "no __global__ declaration of " + quoted + ", but this line passes it to " + use.macro +
                            "(...), which may generate one (a macro from another file?): write the declaration out");
    for (const auto& [macro_name, macro] : macros)
        if (macro.file.empty() && declares_global(macro) && mentions(macro, name))
            return make(Status::unreadable, macro.line,
                        quoted + " is declared only inside the function-like macro " + macro_name +
                            ", whose parameters cannot be read: write the declaration out");
    if (int line = scanner.line_without_global())
        return make(Status::not_found, line,
                    "no __global__ function " + quoted + " found in the CUDA source; this line declares " + quoted +
                        " without __global__ (behind a macro from another file?)");
    return make(Status::not_found, 0, "no __global__ function " + quoted + " found in the CUDA source");
}

CudaKernelDeclaration combine(std::vector<CudaDeclaration> declarations, std::string_view name)
{
    // A prototype that only lacks names says nothing about them.
    bool any_named =
        std::any_of(declarations.begin(), declarations.end(), [](const CudaDeclaration& d) { return d.parameters.ok; });
    if (any_named)
        std::erase_if(declarations, [](const CudaDeclaration& d) { return d.parameters.unnamed_only && !d.has_body; });
    // The compiler takes the names of the definition: a prototype's names
    // are not part of the function (and an extern "C" one cannot be an
    // overload), so they do not count once a definition is seen. Only
    // prototypes alone must agree among themselves.
    bool defined =
        std::any_of(declarations.begin(), declarations.end(), [](const CudaDeclaration& d) { return d.has_body; });
    if (defined) std::erase_if(declarations, [](const CudaDeclaration& d) { return !d.has_body; });
    for (const auto& d : declarations)
        if (!d.parameters.ok)
            return {make(Status::unreadable, d.line,
                         "cannot read the parameters of '" + std::string(name) + "': " + d.parameters.problem),
                    {},
                    0,
                    {}};
    std::stable_sort(declarations.begin(), declarations.end(),
                     [](const CudaDeclaration& a, const CudaDeclaration& b) { return a.line < b.line; });
    const CudaDeclaration& first = declarations.front();
    for (const auto& d : declarations)
        if (d.parameters.names != first.parameters.names)
            return {make(Status::unreadable, d.line,
                         "conflicting declarations of '" + std::string(name) + "': line " + std::to_string(first.line) +
                             " takes " + joined(first.parameters.names) + ", line " + std::to_string(d.line) +
                             " takes " + joined(d.parameters.names) +
                             "; cannot tell which one is compiled (#if branches or overloads)"),
                    {},
                    0,
                    {}};
    auto definition =
        std::find_if(declarations.begin(), declarations.end(), [](const CudaDeclaration& d) { return d.has_body; });
    std::size_t chosen =
        definition != declarations.end() ? static_cast<std::size_t>(definition - declarations.begin()) : 0;
    SignatureRead read = make(Status::found, declarations[chosen].line, "", declarations[chosen].parameters.names);
    return {std::move(read), std::move(declarations), chosen, {}};
}

}  // namespace

namespace signatures {

CudaKernelDeclaration read_cuda_declaration(std::string_view source, std::string_view name, IncludeSource* includes)
{
    return read_cuda_declaration_of_tokens(lex_cpp(source), name, includes);
}

CudaKernelDeclaration read_cuda_declaration_of_tokens(const std::vector<CppToken>& tokens, std::string_view name,
                                                      IncludeSource* includes)
{
    CudaDeclarationScanner scanner{std::string(name)};
    CppPreprocessor preprocessor(scanner, includes);
    preprocessor.run(tokens);
    scanner.finish();
    if (preprocessor.expansion_limit_hit())
        return {make(Status::unreadable, 0,
                     "its object-like macros expand to more than " + std::to_string(CppPreprocessor::expansion_factor) +
                         " times the file's tokens; not read"),
                {},
                0,
                {}};
    if (scanner.declarations().empty())
        return {without_declaration(scanner, preprocessor.function_macros(), name), {}, 0, {}};
    CudaKernelDeclaration result = combine(scanner.declarations(), name);
    result.instantiations = scanner.instantiations();
    return result;
}

SignatureRead read_cuda_signature_with(std::string_view source, std::string_view name, IncludeSource* includes)
{
    return read_cuda_declaration(source, name, includes).read;
}

}  // namespace signatures

SignatureRead read_cuda_signature(std::string_view source, std::string_view name)
{
    return signatures::read_cuda_declaration(source, name).read;
}

}  // namespace ck
