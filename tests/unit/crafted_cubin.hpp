// Cubins crafted byte by byte, every field under the test's control: the
// artifact checks' tests, and cache tests that need entries a build would
// publish (check_artifact passes them) without running a compiler.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ck::test {

struct CraftedSymbol {
    std::string name;
    unsigned char type = STT_FUNC;
    unsigned char bind = STB_GLOBAL;
    bool defined = true;
};

struct CraftedCubin {
    std::uint16_t type = ET_EXEC;
    std::uint16_t machine = 190;
    std::uint8_t abi_version = 8;
    std::uint32_t flags = 0x06005a04;  // sm_90, as nvcc 13 writes it
    std::vector<CraftedSymbol> symbols = {{"push"}};
};

template <typename T>
inline void append(std::string& bytes, const T& value)
{
    bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// An ELF64 file: header, string table, symbol table, then three section
// headers (null, .strtab, .symtab), which is all the checks read.
inline std::string craft(const CraftedCubin& c)
{
    std::string names(1, '\0');
    std::string symbols(sizeof(Elf64_Sym), '\0');
    for (const auto& s : c.symbols) {
        Elf64_Sym symbol{};
        symbol.st_name = static_cast<Elf64_Word>(names.size());
        symbol.st_info = ELF64_ST_INFO(s.bind, s.type);
        symbol.st_shndx = s.defined ? 1 : SHN_UNDEF;
        append(symbols, symbol);
        names += s.name + '\0';
    }
    while (names.size() % 8) names += '\0';
    Elf64_Ehdr header{};
    std::memcpy(header.e_ident, ELFMAG, SELFMAG);
    header.e_ident[EI_CLASS] = ELFCLASS64;
    header.e_ident[EI_DATA] = ELFDATA2LSB;
    header.e_ident[EI_VERSION] = EV_CURRENT;
    header.e_ident[EI_OSABI] = 0x41;
    header.e_ident[EI_ABIVERSION] = c.abi_version;
    header.e_type = c.type;
    header.e_machine = c.machine;
    header.e_flags = c.flags;
    header.e_ehsize = sizeof(Elf64_Ehdr);
    header.e_shentsize = sizeof(Elf64_Shdr);
    header.e_shnum = 3;
    header.e_shoff = sizeof(Elf64_Ehdr) + names.size() + symbols.size();
    Elf64_Shdr none{}, strtab{}, symtab{};
    strtab.sh_type = SHT_STRTAB;
    strtab.sh_offset = sizeof(Elf64_Ehdr);
    strtab.sh_size = names.size();
    symtab.sh_type = SHT_SYMTAB;
    symtab.sh_offset = sizeof(Elf64_Ehdr) + names.size();
    symtab.sh_size = symbols.size();
    symtab.sh_entsize = sizeof(Elf64_Sym);
    symtab.sh_link = 1;
    std::string bytes;
    append(bytes, header);
    bytes += names + symbols;
    append(bytes, none);
    append(bytes, strtab);
    append(bytes, symtab);
    return bytes;
}

/// A cubin that passes check_artifact for `sm_90` and entry `entry`, with
/// `payload` after it, so that entries of different content differ.
inline std::string loadable_cubin(const std::string& entry, const std::string& payload)
{
    CraftedCubin cubin;
    cubin.symbols = {{entry}};
    return craft(cubin) + payload;
}

}  // namespace ck::test
