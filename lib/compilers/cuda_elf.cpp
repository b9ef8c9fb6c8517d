#include "compilers/cuda_elf.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>

namespace ck {

namespace {

template <typename T>
bool read_at(std::string_view bytes, std::size_t offset, T& value)
{
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return true;
}

std::optional<Elf64_Ehdr> elf64_header(std::string_view elf)
{
    Elf64_Ehdr header{};
    if (!read_at(elf, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64)
        return std::nullopt;
    return header;
}

// The NUL-terminated name at `offset` of string table `strtab`, or "" when it
// lies outside the table or the file.
std::string name_at(std::string_view elf, const Elf64_Shdr& strtab, std::size_t offset)
{
    if (offset >= strtab.sh_size || strtab.sh_offset >= elf.size() || offset >= elf.size() - strtab.sh_offset)
        return {};
    std::size_t start = strtab.sh_offset + offset;
    return std::string(elf.data() + start, strnlen(elf.data() + start, elf.size() - start));
}

}  // namespace

std::optional<CudaElfHeader> read_elf_header(const std::string& elf)
{
    auto header = elf64_header(elf);
    if (!header) return std::nullopt;
    return CudaElfHeader{header->e_type, header->e_machine, header->e_ident[EI_ABIVERSION], header->e_flags};
}

namespace {

// Calls `visit(symbol, name, section_at)` for each symbol of the symbol tables
// of the given types until it returns true; section_at(index, section) reads
// a section header, false outside the table or the file. False when the bytes
// are no 64-bit ELF or a section header lies outside them.
template <typename Visit>
bool walk_symbols(std::string_view elf, std::initializer_list<unsigned> table_types, Visit visit)
{
    auto header = elf64_header(elf);
    if (!header) return false;
    auto section_at = [&](std::size_t index, Elf64_Shdr& section) {
        return index < header->e_shnum && read_at(elf, header->e_shoff + index * header->e_shentsize, section);
    };
    for (unsigned i = 0; i < header->e_shnum; ++i) {
        Elf64_Shdr table{}, strtab{};
        if (!section_at(i, table)) return false;
        if (std::find(table_types.begin(), table_types.end(), table.sh_type) == table_types.end() ||
            table.sh_entsize == 0)
            continue;
        if (!section_at(table.sh_link, strtab)) return false;
        for (std::size_t s = 0; s < table.sh_size / table.sh_entsize; ++s) {
            Elf64_Sym symbol{};
            if (!read_at(elf, table.sh_offset + s * table.sh_entsize, symbol)) break;
            if (visit(symbol, name_at(elf, strtab, symbol.st_name), section_at)) return true;
        }
    }
    return true;
}

}  // namespace

std::vector<ElfSymbol> read_elf_symbols(const std::string& elf)
{
    std::vector<ElfSymbol> symbols;
    walk_symbols(elf, {SHT_SYMTAB}, [&](const Elf64_Sym& symbol, std::string name, auto&) {
        // The macros give int; clang refuses the narrowing in braces.
        symbols.push_back(ElfSymbol{std::move(name), static_cast<unsigned char>(ELF64_ST_TYPE(symbol.st_info)),
                                    static_cast<unsigned char>(ELF64_ST_BIND(symbol.st_info)),
                                    symbol.st_shndx != SHN_UNDEF});
        return false;
    });
    return symbols;
}

std::optional<std::string> read_elf_object(std::string_view elf, const std::string& name)
{
    std::optional<std::string> bytes;
    walk_symbols(
        elf, {SHT_SYMTAB, SHT_DYNSYM}, [&](const Elf64_Sym& symbol, const std::string& symbol_name, auto& section_at) {
            if (ELF64_ST_TYPE(symbol.st_info) != STT_OBJECT || symbol.st_shndx == SHN_UNDEF || symbol_name != name)
                return false;
            Elf64_Shdr holder{};
            if (!section_at(symbol.st_shndx, holder) || holder.sh_type == SHT_NOBITS ||
                symbol.st_value < holder.sh_addr)
                return true;
            std::uint64_t within = symbol.st_value - holder.sh_addr;
            if (within > holder.sh_size || symbol.st_size > holder.sh_size - within) return true;
            std::uint64_t offset = holder.sh_offset + within;
            if (offset > elf.size() || symbol.st_size > elf.size() - offset) return true;
            bytes = std::string(elf.substr(offset, symbol.st_size));
            return true;
        });
    return bytes;
}

std::uint64_t elf_extent(std::string_view elf)
{
    auto header = elf64_header(elf);
    if (!header) return 0;
    // 64-bit sums of 64-bit fields of untrusted bytes: capped, never wrapped.
    auto end_of = [](std::uint64_t offset, std::uint64_t size) {
        return size > UINT64_MAX - offset ? UINT64_MAX : offset + size;
    };
    std::uint64_t section_table = end_of(header->e_shoff, std::uint64_t(header->e_shnum) * header->e_shentsize);
    std::uint64_t extent = std::max<std::uint64_t>(sizeof(Elf64_Ehdr), section_table);
    extent = std::max(extent, end_of(header->e_phoff, std::uint64_t(header->e_phnum) * header->e_phentsize));
    for (unsigned i = 0; i < header->e_shnum; ++i) {
        Elf64_Shdr section{};
        if (!read_at(elf, header->e_shoff + std::size_t(i) * header->e_shentsize, section)) break;
        if (section.sh_type != SHT_NOBITS) extent = std::max(extent, end_of(section.sh_offset, section.sh_size));
    }
    return extent;
}

std::optional<ElfFileExtent> elf_file_extent(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary | std::ios::ate);
    if (!in) return std::nullopt;
    ElfFileExtent found;
    found.size = static_cast<std::uint64_t>(in.tellg());
    // The header and the section header table at their offsets; the bytes
    // between stay zero, as elf_extent reads nothing else.
    std::string header(std::min<std::uint64_t>(found.size, sizeof(Elf64_Ehdr)), '\0');
    in.seekg(0);
    in.read(header.data(), static_cast<std::streamsize>(header.size()));
    auto parsed = elf64_header(header);
    if (!parsed) return found;
    std::uint64_t table = std::uint64_t(parsed->e_shnum) * parsed->e_shentsize;
    std::uint64_t end = parsed->e_shoff > found.size ? found.size : std::min(found.size, parsed->e_shoff + table);
    std::string sparse(std::max<std::uint64_t>(end, header.size()), '\0');
    sparse.replace(0, header.size(), header);
    if (end > parsed->e_shoff) {
        in.seekg(static_cast<std::streamoff>(parsed->e_shoff));
        in.read(sparse.data() + parsed->e_shoff, static_cast<std::streamsize>(end - parsed->e_shoff));
    }
    found.extent = elf_extent(sparse);
    return found;
}

std::optional<ElfSection> read_elf_section(const std::string& elf, const std::string& name)
{
    auto header = elf64_header(elf);
    if (!header) return std::nullopt;
    Elf64_Shdr names{};
    if (!read_at(elf, header->e_shoff + std::size_t(header->e_shstrndx) * header->e_shentsize, names))
        return std::nullopt;
    for (unsigned i = 0; i < header->e_shnum; ++i) {
        Elf64_Shdr section{};
        if (!read_at(elf, header->e_shoff + std::size_t(i) * header->e_shentsize, section)) return std::nullopt;
        if (name_at(elf, names, section.sh_name) != name) continue;
        if (section.sh_type == SHT_NOBITS || section.sh_offset >= elf.size())
            return ElfSection{{}, section.sh_size != 0};
        std::size_t available = elf.size() - section.sh_offset;
        bool truncated = section.sh_size > available;
        return ElfSection{elf.substr(section.sh_offset, truncated ? available : section.sh_size), truncated};
    }
    return std::nullopt;
}

int cuda_elf_sm(const CudaElfHeader& header)
{
    return header.abi_version >= 8 ? (header.flags >> 8) & 0xff : header.flags & 0xff;
}

bool cuda_elf_accelerated(const CudaElfHeader& header)
{
    return (header.flags & (header.abi_version >= 8 ? 0x8u : 0x800u)) != 0;
}

}  // namespace ck
