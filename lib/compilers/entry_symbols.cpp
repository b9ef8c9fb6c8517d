#include "compilers/entry_symbols.hpp"

#include "compilers/cuda_elf.hpp"

#include <elf.h>

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

std::string pick_entry_symbol(const std::vector<std::string>& symbols, const std::string& kernel)
{
    std::string mangled_prefix = "_Z" + std::to_string(kernel.size()) + kernel;
    std::vector<std::string> matches;
    for (const auto& symbol : symbols) {
        if (symbol == kernel) return symbol;
        if (symbol.rfind(mangled_prefix, 0) == 0) matches.push_back(symbol);
    }
    return matches.size() == 1 ? matches.front() : std::string();
}

}  // namespace ck
