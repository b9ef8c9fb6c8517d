#include "runtime/parameter_layout.hpp"

#include <algorithm>
#include <cstdlib>

namespace ck {

namespace {

std::size_t aligned(std::size_t offset, std::size_t alignment)
{
    return (offset + alignment - 1) / alignment * alignment;
}

// Size and alignment of one parameter or field; nothing for an unknown struct.
std::optional<StructLayout> layout_of(const KernelParameter& parameter, const StructLayouts& structs)
{
    if (parameter.kind == ParameterKind::structure) {
        auto found = structs.find(parameter.ctype);
        if (found == structs.end()) return std::nullopt;
        return found->second;
    }
    std::size_t size = parameter.packed_size();
    // Views are a pointer and 64-bit integers; scalars align to their size
    // (complex<T> to T's).
    bool complex = parameter.kind == ParameterKind::scalar &&
                   (parameter.element == ElementType::complex64 || parameter.element == ElementType::complex128);
    std::size_t alignment = parameter.kind == ParameterKind::scalar ? (complex ? size / 2 : size) : 8;
    return StructLayout{size, std::max<std::size_t>(alignment, 1)};
}

std::string describe_packed(const PackedParameter& packed)
{
    return "offset " + (packed.offset ? std::to_string(*packed.offset) : std::string("unknown")) + ", " +
           (packed.size ? std::to_string(*packed.size) : std::string("unknown")) + " bytes";
}

}  // namespace

std::optional<StructLayout> struct_layout(const std::vector<KernelParameter>& fields, const StructLayouts& structs)
{
    StructLayout layout;
    for (const auto& field : fields) {
        auto member = layout_of(field, structs);
        if (!member) return std::nullopt;
        layout.size = aligned(layout.size, member->alignment) + member->size;
        layout.alignment = std::max(layout.alignment, member->alignment);
    }
    layout.size = aligned(layout.size, layout.alignment);
    return layout;
}

std::size_t parameter_bank_offset(const std::string& target)
{
    if (target.rfind("sm_", 0) != 0) return 0;
    int major_minor = std::atoi(target.c_str() + 3);
    if (major_minor <= 0) return 0;
    if (major_minor < 90) return 0x160;
    if (major_minor < 100) return 0x210;
    return 0x380;
}

std::vector<PackedParameter> packed_layout(const std::vector<KernelParameter>& parameters, const StructLayouts& structs,
                                           std::size_t bank_offset)
{
    std::vector<PackedParameter> packed;
    std::optional<std::size_t> end = 0;
    for (const auto& parameter : parameters) {
        auto layout = layout_of(parameter, structs);
        PackedParameter p;
        if (layout) {
            p.size = layout->size;
            if (end) p.offset = aligned(bank_offset + *end, layout->alignment) - bank_offset;
        }
        end = p.offset && p.size ? std::optional<std::size_t>(*p.offset + *p.size) : std::nullopt;
        packed.push_back(p);
    }
    return packed;
}

std::string layout_mismatch(const std::string& kernel, const std::vector<KernelParameter>& parameters,
                            const std::vector<PackedParameter>& packed, const std::vector<CubinParameter>& cubin)
{
    const std::string rebuild =
        "; regenerate the struct headers and rebuild (cunumpy-kernels build), or fix the "
        "declaration the runtime reads";
    if (cubin.size() != parameters.size())
        return "kernel '" + kernel + "': the cubin takes " + std::to_string(cubin.size()) +
               " parameters, its declaration " + std::to_string(parameters.size()) + rebuild;
    for (std::size_t i = 0; i < parameters.size(); ++i) {
        bool size_differs = packed[i].size && *packed[i].size != cubin[i].size;
        bool offset_differs = packed[i].offset && *packed[i].offset != cubin[i].offset;
        if (!size_differs && !offset_differs) continue;
        return "kernel '" + kernel + "': " + describe_parameter(parameters[i], i) + ": the cubin has " +
               describe_cubin_parameter(cubin[i]) + ", the runtime packs " + describe_packed(packed[i]) + rebuild;
    }
    return "";
}

}  // namespace ck
