// The layouts of the structs a kernel tree's configured struct headers
// define (Config::struct_headers): the structs kernels take by value, as
// cunumpy's CudaStruct writes them. check-signatures and status prove each
// header is what its CudaStruct writes (header_check.hpp), so these are the
// layouts cunumpy packs.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "runtime/parameter_layout.hpp"
#include "struct_headers/struct_reader.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ck {

/// The layout of every struct of `text` (the header `file`) that
/// read_structs can lay out, read as it is (no preprocessor). Never throws.
StructLayouts read_struct_layouts(const std::string& text, const std::filesystem::path& file);

/// The structs of the header `header` (its text: `text`) as the kernels'
/// compiler reads them (header_tokens), and what cannot be laid out, each
/// naming the header's line. Throws SourceError when the header's
/// conditional compilation cannot be decided.
StructReading read_header_structs(const std::string& text, const std::filesystem::path& header, const Config& config);

/// A struct that two configured headers define.
struct DuplicateStruct {
    std::string name;
    std::filesystem::path first, second;  ///< the headers, in path order
    /// "struct <name> is defined by both <first> and <second> ...; rename one".
    std::string message() const;
};

/// The structs of every header of `config.struct_headers`.
struct ConfiguredStructs {
    StructLayouts layouts;  ///< by name; a name defined twice: its first definition
    std::vector<DuplicateStruct> duplicates;
    /// What a header has that cannot be laid out, or a header whose layouts
    /// cannot be decided: the header and the message.
    std::vector<std::pair<std::filesystem::path, std::string>> unreadable;
};

/// read_header_structs of every header of `config.struct_headers`, the
/// names two of them define, and what they cannot lay out. Throws
/// SourceError naming a header that cannot be read.
ConfiguredStructs read_configured_structs(const Config& config);

/// read_header_structs of every header of `config.struct_headers`, merged.
/// Throws SourceError naming a header that cannot be read, a struct that
/// two headers define (no layout would be sure to be the one packed), or
/// what a header has that cannot be laid out (never a layout guessed).
StructLayouts configured_struct_layouts(const Config& config);

}  // namespace ck
