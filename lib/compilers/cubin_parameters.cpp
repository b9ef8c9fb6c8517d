#include "compilers/cubin_parameters.hpp"

#include "compilers/cuda_elf.hpp"
#include "cunumpy_kernels/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ck {

namespace {

// The record formats of `.nv.info` sections: a byte of format, a byte of
// attribute, then a value whose length the format gives (EIFMT_SVAL: a
// 16-bit length, then that many bytes).
constexpr std::uint8_t format_no_value = 1;  // EIFMT_NVAL: 2 more bytes, unused
constexpr std::uint8_t format_byte = 2;      // EIFMT_BVAL: 2 more bytes
constexpr std::uint8_t format_half = 3;      // EIFMT_HVAL: a 16-bit value
constexpr std::uint8_t format_sized = 4;     // EIFMT_SVAL: 16-bit length, then the bytes
constexpr std::uint8_t kparam_info = 0x17;
constexpr std::uint8_t kparam_info_v2 = 0x45;
constexpr std::size_t kparam_record_size = 12;  // u32 index, u16 ordinal, u16 offset, u32 size and flags

std::uint32_t load32(const std::string& bytes, std::size_t at)
{
    std::uint32_t value = 0;
    std::memcpy(&value, bytes.data() + at, sizeof value);
    return value;
}

std::uint16_t load16(const std::string& bytes, std::size_t at)
{
    std::uint16_t value = 0;
    std::memcpy(&value, bytes.data() + at, sizeof value);
    return value;
}

class InfoReader {
public:
    InfoReader(const std::string& section, std::string where) : bytes_(section), where_(std::move(where)) {}

    std::vector<CubinParameter> parameters()
    {
        std::vector<CubinParameter> found;
        std::size_t at = 0;
        while (at < bytes_.size()) {
            if (bytes_.size() - at < 4) fail(at, "a record header runs past the section's end");
            std::uint8_t format = static_cast<std::uint8_t>(bytes_[at]);
            std::uint8_t attribute = static_cast<std::uint8_t>(bytes_[at + 1]);
            if (format == format_no_value || format == format_byte || format == format_half) {
                at += 4;
                continue;
            }
            if (format != format_sized)
                fail(at, "unknown record format " + std::to_string(format) + " (attribute " +
                             std::to_string(attribute) + ")");
            std::size_t length = load16(bytes_, at + 2);
            if (bytes_.size() - at - 4 < length)
                fail(at, "a record of " + std::to_string(length) + " bytes runs past the section's end");
            if (attribute == kparam_info || attribute == kparam_info_v2)
                found.push_back(parameter(at, attribute, length));
            at += 4 + length;
        }
        return ordered(std::move(found));
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& what) const
    {
        throw ArtifactError(where_ + ", byte " + std::to_string(at) + ": " + what +
                            "; the cubin is damaged: rebuild it (cunumpy-kernels build)");
    }

    CubinParameter parameter(std::size_t at, std::uint8_t attribute, std::size_t length) const
    {
        if (length != kparam_record_size)
            fail(at, "a parameter record of " + std::to_string(length) + " bytes, not " +
                         std::to_string(kparam_record_size));
        std::size_t value = at + 4;
        std::uint32_t last = load32(bytes_, value + 8);
        std::size_t size = attribute == kparam_info ? last >> 18 : last & 0xffff;
        return CubinParameter{load16(bytes_, value + 4), load16(bytes_, value + 6), size};
    }

    // The records come last parameter first; a layout is only trusted when
    // the ordinals are 0 to n-1, each once, and no two parameters overlap.
    std::vector<CubinParameter> ordered(std::vector<CubinParameter> found) const
    {
        std::sort(found.begin(), found.end(),
                  [](const CubinParameter& a, const CubinParameter& b) { return a.ordinal < b.ordinal; });
        for (std::size_t i = 0; i < found.size(); ++i) {
            if (found[i].ordinal != i)
                fail(0, (found[i].ordinal < i ? "parameter " + std::to_string(found[i].ordinal) + " is described twice"
                                              : "no record for parameter " + std::to_string(i)));
        }
        std::vector<CubinParameter> by_offset = found;
        std::sort(by_offset.begin(), by_offset.end(),
                  [](const CubinParameter& a, const CubinParameter& b) { return a.offset < b.offset; });
        for (std::size_t i = 1; i < by_offset.size(); ++i)
            if (by_offset[i - 1].offset + by_offset[i - 1].size > by_offset[i].offset)
                fail(0, "parameters " + std::to_string(by_offset[i - 1].ordinal) + " and " +
                            std::to_string(by_offset[i].ordinal) + " overlap");
        return found;
    }

    const std::string& bytes_;
    std::string where_;
};

}  // namespace

std::optional<std::vector<CubinParameter>> read_cubin_parameters(const std::string& cubin,
                                                                 const std::string& entry_symbol,
                                                                 const std::string& what)
{
    std::string name = ".nv.info." + entry_symbol;
    std::optional<ElfSection> section = read_elf_section(cubin, name);
    if (!section) return std::nullopt;
    std::string where = what + ": section " + name;
    if (section->truncated)
        throw ArtifactError(where +
                            " runs past the end of the file; the cubin is damaged: rebuild it "
                            "(cunumpy-kernels build)");
    return InfoReader(section->bytes, where).parameters();
}

std::string describe_cubin_parameter(const CubinParameter& parameter)
{
    return "offset " + std::to_string(parameter.offset) + ", " + std::to_string(parameter.size) + " bytes";
}

}  // namespace ck
