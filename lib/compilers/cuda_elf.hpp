// Reading a cubin's ELF header, symbol table and sections by name: what the
// artifact checks, the entry-symbol search and the parameter layout
// (cubin_parameters.hpp) need, and a host library's exported data
// (read_elf_object); nothing else (no relocations). Bytes are
// untrusted: every offset is bounds-checked.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ck {

/// The fields of an ELF64 header that say what a cubin is.
struct CudaElfHeader {
    std::uint16_t type = 0;        ///< ET_EXEC (loadable) or ET_REL (needs a device link)
    std::uint16_t machine = 0;     ///< EM_CUDA (190) for a cubin
    std::uint8_t abi_version = 0;  ///< e_ident[EI_ABIVERSION]: 7 before CUDA 13, 8 from CUDA 13
    std::uint32_t flags = 0;       ///< e_flags, holding the architecture
};

/// One symbol of the symbol table.
struct ElfSymbol {
    std::string name;
    unsigned char type = 0;  ///< STT_FUNC, STT_OBJECT, ...
    unsigned char bind = 0;  ///< STB_GLOBAL, STB_WEAK, STB_LOCAL
    bool defined = false;    ///< false: st_shndx is SHN_UNDEF
};

/// The header of an ELF64 file; nothing when the bytes are not ELF64.
std::optional<CudaElfHeader> read_elf_header(const std::string& elf);

/// Every symbol of every SHT_SYMTAB section, in order. Empty when the bytes
/// are not ELF64; a table that runs past the end is read up to there.
std::vector<ElfSymbol> read_elf_symbols(const std::string& elf);

/// The file bytes of the defined data symbol `name` (STT_OBJECT, found in
/// the symbol table or, in a stripped shared library, the dynamic one),
/// through the section that holds it; nothing when the bytes are not ELF64,
/// no such symbol is defined or it lies outside the file. For reading what
/// a library exports (the host library's description) without loading it.
std::optional<std::string> read_elf_object(std::string_view elf, const std::string& name);

/// How many bytes the ELF's own headers say it spans: the end of its
/// section header table, of its program header table and of every section
/// with bytes in the file (not SHT_NOBITS), whichever is last. Larger than
/// `elf.size()` when the file was cut short; 0 when the bytes are not ELF64.
/// Section headers past the end of the file are not read.
std::uint64_t elf_extent(std::string_view elf);

/// A file's size and elf_extent, reading only its ELF header and section
/// header table (a library is not read whole to be checked). Nothing when
/// the file cannot be opened.
struct ElfFileExtent {
    std::uint64_t size = 0;
    std::uint64_t extent = 0;  ///< 0 when the file is not ELF64
};
std::optional<ElfFileExtent> elf_file_extent(const std::filesystem::path& file);

/// A section's bytes, found by name in the section-name string table.
struct ElfSection {
    std::string bytes;
    bool truncated = false;  ///< the header says it runs past the file's end: `bytes` holds what is there
};

/// The section named `name`: nothing when the bytes are not ELF64 or no
/// section has that name (the first one wins when several do).
std::optional<ElfSection> read_elf_section(const std::string& elf, const std::string& name);

/// The SASS architecture a cubin header names, as the number of `sm_<number>`
/// (80, 90, 100, 120). The field moved in CUDA 13 (LLVM's BinaryFormat/ELF.h,
/// EF_CUDA_SM and EF_CUDA_SM_MASK; checked with readelf -h on nvcc 13 cubins
/// for sm_80 to sm_120): ABI version 8 keeps it in bits 8 to 15 (sm_90:
/// e_flags 0x06005a04), earlier versions in bits 0 to 7.
int cuda_elf_sm(const CudaElfHeader& header);

/// Whether the cubin uses architecture-specific features (`sm_90a`): bit 3 of
/// e_flags from ABI version 8 (EF_CUDA_ACCELERATORS), bit 11 before it. A
/// clear bit proves nothing: nvcc 13 left it clear on sm_90a and sm_100a
/// cubins, even ones using `setmaxnreg`.
bool cuda_elf_accelerated(const CudaElfHeader& header);

}  // namespace ck
