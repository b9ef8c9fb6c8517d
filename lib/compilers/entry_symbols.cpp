#include "compilers/entry_symbols.hpp"

#include "compilers/cuda_elf.hpp"

#include <cxxabi.h>
#include <elf.h>

#include <cstdlib>
#include <memory>

#include <algorithm>
#include <cctype>
#include <regex>

namespace ck {

std::vector<std::string> elf_function_symbols(const std::string& elf)
{
    std::vector<std::string> names;
    for (auto& symbol : read_elf_symbols(elf))
        if (symbol.type == STT_FUNC && !symbol.name.empty()) names.push_back(std::move(symbol.name));
    return names;
}

std::vector<std::string> ptx_entries(const std::string& ptx)
{
    static const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
    std::vector<std::string> names;
    for (std::sregex_iterator it(ptx.begin(), ptx.end(), entry), end; it != end; ++it) names.push_back((*it)[1]);
    return names;
}

namespace {

// The Itanium mangling's start for a free function `kernel` (or a template of it).
std::string mangled_prefix(const std::string& kernel) { return "_Z" + std::to_string(kernel.size()) + kernel; }

}  // namespace

std::string pick_entry_symbol(const std::vector<std::string>& symbols, const std::string& kernel)
{
    std::string prefix = mangled_prefix(kernel);
    std::vector<std::string> matches;
    for (const auto& symbol : symbols) {
        if (symbol == kernel) return symbol;
        if (symbol.rfind(prefix, 0) == 0) matches.push_back(symbol);
    }
    return matches.size() == 1 ? matches.front() : std::string();
}

bool is_entry_of(const std::string& symbol, const std::string& kernel)
{
    return symbol == kernel || symbol.rfind(mangled_prefix(kernel), 0) == 0;
}

namespace {

// The demangled form of an Itanium symbol; empty when it does not demangle.
std::string demangled(const std::string& symbol)
{
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                     &std::free);
    return status == 0 && text ? std::string(text.get()) : std::string();
}

}  // namespace

std::string template_arguments_of(const std::string& text, const std::string& kernel)
{
    // The kernel's name as a whole word followed by `<`: after the return type, before the parameters.
    for (std::size_t at = text.find(kernel + "<"); at != std::string::npos; at = text.find(kernel + "<", at + 1)) {
        bool word_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
        if (!word_start) continue;
        std::string args;
        int depth = 0;
        for (std::size_t i = at + kernel.size(); i < text.size(); ++i) {
            char ch = text[i];
            if (ch == '<' && depth++ == 0) continue;
            if (ch == '>' && --depth == 0) return args;
            if (ch != ' ') args += ch;
        }
        return "";
    }
    return "";
}

std::string pick_template_entry_symbol(const std::vector<std::string>& symbols, const std::string& kernel,
                                       const std::string& expression)
{
    std::string prefix = mangled_prefix(kernel) + "I";
    std::string wanted = template_arguments_of(expression, kernel);
    std::vector<std::string> instances;
    for (const auto& symbol : symbols) {
        if (symbol.rfind(prefix, 0) != 0) continue;
        if (std::find(instances.begin(), instances.end(), symbol) != instances.end()) continue;
        if (!wanted.empty() && template_arguments_of(demangled(symbol), kernel) == wanted) return symbol;
        instances.push_back(symbol);
    }
    return instances.size() == 1 ? instances.front() : std::string();
}

}  // namespace ck
