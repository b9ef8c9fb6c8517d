// The layouts of the structs a kernel tree's configured struct headers
// define (Config::struct_headers): the structs kernels take by value, as
// cunumpy's CudaStruct writes them. check-signatures and status prove each
// header is what its CudaStruct writes (header_check.hpp), so these are the
// layouts cunumpy packs.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "runtime/parameter_layout.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ck {

/// The layout of every `struct <name> { <fields> };` of `text` (the header
/// `file`), in order, each field typed as a kernel parameter is (scalars,
/// pointers, array views, and structs defined before it). A definition that
/// cannot be laid out (an unknown type, a nested definition, a bit field)
/// is left out, since no CudaStruct writes one. Never throws.
StructLayouts read_struct_layouts(const std::string& text, const std::filesystem::path& file);

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
};

/// read_struct_layouts of every header of `config.struct_headers`, and the
/// names two of them define. Throws SourceError naming a header that cannot
/// be read.
ConfiguredStructs read_configured_structs(const Config& config);

/// read_struct_layouts of every header of `config.struct_headers`, merged.
/// Throws SourceError naming a header that cannot be read, or a struct that
/// two headers define (no layout would be sure to be the one packed).
StructLayouts configured_struct_layouts(const Config& config);

}  // namespace ck
