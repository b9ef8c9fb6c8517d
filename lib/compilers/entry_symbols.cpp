#include "compilers/entry_symbols.hpp"

#include <elf.h>

#include <cstring>
#include <regex>

namespace ck {

namespace {

template <typename T>
bool read_at(const std::string& bytes, std::size_t offset, T& value)
{
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return true;
}

}  // namespace

std::vector<std::string> elf_function_symbols(const std::string& elf)
{
    std::vector<std::string> names;
    Elf64_Ehdr header{};
    if (!read_at(elf, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64)
        return names;
    for (unsigned i = 0; i < header.e_shnum; ++i) {
        Elf64_Shdr symtab{};
        if (!read_at(elf, header.e_shoff + std::size_t(i) * header.e_shentsize, symtab)) return names;
        if (symtab.sh_type != SHT_SYMTAB || symtab.sh_entsize == 0) continue;
        Elf64_Shdr strtab{};
        if (!read_at(elf, header.e_shoff + std::size_t(symtab.sh_link) * header.e_shentsize, strtab)) return names;
        for (std::size_t s = 0; s < symtab.sh_size / symtab.sh_entsize; ++s) {
            Elf64_Sym symbol{};
            if (!read_at(elf, symtab.sh_offset + s * symtab.sh_entsize, symbol)) break;
            if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_name >= strtab.sh_size) continue;
            std::size_t start = strtab.sh_offset + symbol.st_name;
            if (start >= elf.size()) continue;
            names.emplace_back(elf.c_str() + start, strnlen(elf.c_str() + start, elf.size() - start));
        }
    }
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
