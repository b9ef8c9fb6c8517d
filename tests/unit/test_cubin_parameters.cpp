// The cubin's own parameter layout (EIATTR_KPARAM_INFO and _V2 records)
// against cubins nvcc 13 built for sm_80, sm_90 and sm_90a (tests/unit/cubins,
// kparam.cu says how), its comparison with what the runtime packs, and
// damaged sections: no crash, a clear error.
#include "compilers/cubin_parameters.hpp"
#include "compilers/entry_symbols.hpp"
#include "cunumpy_kernels/error.hpp"
#include "fake_cuda_driver.hpp"
#include "runtime/cuda_kernel.hpp"
#include "runtime/gpu_state.hpp"
#include "runtime/image_source.hpp"
#include "runtime/kernel_signature.hpp"
#include "runtime/parameter_layout.hpp"
#include "struct_headers/struct_layouts.hpp"
#include "util/file_util.hpp"

#include <doctest/doctest.h>

#include <elf.h>

#include <cstdlib>
#include <map>
#include <cstring>

using namespace ck;

namespace {

std::filesystem::path cubin_dir()
{
    const char* dir = std::getenv("CK_CUBIN_DIR");
    REQUIRE_MESSAGE(dir, "CK_CUBIN_DIR names tests/unit/cubins (set by meson test)");
    return dir;
}

std::string cubin(const std::string& target) { return util::read_file(cubin_dir() / ("kparam." + target + ".cubin")); }

using Layout = std::vector<std::array<std::size_t, 2>>;  // offset, size by ordinal

Layout layout_of(const std::vector<CubinParameter>& parameters)
{
    Layout layout;
    for (std::size_t i = 0; i < parameters.size(); ++i) {
        CHECK(parameters[i].ordinal == i);
        layout.push_back({parameters[i].offset, parameters[i].size});
    }
    return layout;
}

Layout read(const std::string& bytes, const std::string& entry)
{
    auto parameters = read_cubin_parameters(bytes, entry, "kparam.cubin");
    REQUIRE(parameters);
    return layout_of(*parameters);
}

std::string mangled_entry(const std::string& bytes)
{
    return pick_entry_symbol(elf_function_symbols(bytes), "mangled");
}

// The file offset and size of section `name`, for damaging it in place.
std::pair<std::size_t, std::size_t> section_span(const std::string& elf, const std::string& name)
{
    Elf64_Ehdr header{};
    std::memcpy(&header, elf.data(), sizeof header);
    Elf64_Shdr names{};
    std::memcpy(&names, elf.data() + header.e_shoff + header.e_shstrndx * header.e_shentsize, sizeof names);
    for (unsigned i = 0; i < header.e_shnum; ++i) {
        Elf64_Shdr section{};
        std::memcpy(&section, elf.data() + header.e_shoff + i * header.e_shentsize, sizeof section);
        if (name == elf.c_str() + names.sh_offset + section.sh_name) return {section.sh_offset, section.sh_size};
    }
    FAIL("no section " << name);
    return {};
}

// The offset of the first parameter record (format 4, attribute 0x17 or 0x45) in a section.
std::size_t first_parameter_record(const std::string& elf, std::pair<std::size_t, std::size_t> span)
{
    for (std::size_t at = span.first; at < span.first + span.second;) {
        auto format = static_cast<unsigned char>(elf[at]);
        auto attribute = static_cast<unsigned char>(elf[at + 1]);
        if (format == 4 && (attribute == 0x17 || attribute == 0x45)) return at;
        std::uint16_t length = 0;
        std::memcpy(&length, elf.data() + at + 2, 2);
        at += format == 4 ? 4 + length : 4;
    }
    FAIL("no parameter record");
    return 0;
}

// The parameters `source`'s __global__ `name` declares, as the runtime reads them.
std::vector<KernelParameter> declared(const std::string& name)
{
    std::string source = util::read_file(cubin_dir() / "kparam.cu");
    return read_global_signature(source, name, cubin_dir() / "kparam.cu").parameters;
}

StructLayouts test_structs()
{
    return read_struct_layouts(util::read_file(cubin_dir() / "kparam_structs.cuh"), "kparam_structs.cuh");
}

std::string damaged_error(const std::string& bytes, const std::string& entry = "mixed")
{
    try {
        read_cubin_parameters(bytes, entry, "kparam.sm_90.cubin");
    } catch (const ArtifactError& error) {
        return error.what();
    }
    return "";
}

// One cubin, as a cache or bundle would hand it to the kernel.
class OneImage : public ImageSource {
public:
    OneImage(std::string bytes, std::string entry) : bytes_(std::move(bytes)), entry_(std::move(entry)) {}
    std::vector<ImageCandidate> candidates(int, int, std::vector<std::string>&) override
    {
        return {{"sm_90", [this] {
                     ModuleImage image{bytes_, entry_, {}};
                     image.info.how = "cubin";
                     image.info.target = "sm_90";
                     return std::optional<ModuleImage>(std::move(image));
                 }}};
    }
    std::string kind() const override { return "the test"; }
    std::string holder() const override { return "the test"; }
    std::optional<ModuleImage> build(int, int, std::string& why_not) override
    {
        why_not = "the test builds nothing";
        return std::nullopt;
    }

private:
    std::string bytes_, entry_;
};

// Loads `mixed` from the sm_90 cubin with a driver that lacks cuFuncGetParamInfo.
void load_mixed(std::vector<KernelParameter> parameters)
{
    auto driver = std::make_shared<test::FakeCudaDriver>();
    CudaKernelFacts facts{"mixed", cubin_dir() / "kparam.cu", std::move(parameters), ""};
    CudaKernel kernel(facts, std::make_unique<OneImage>(cubin("sm_90"), "mixed"), GpuAccess::over(driver), {});
    kernel.load();
}

const Layout mixed_layout = {{0, 1}, {8, 8}, {16, 4}, {24, 24}, {48, 4}, {56, 8}, {64, 2}, {72, 8}, {80, 1}, {88, 8}};

}  // namespace

TEST_SUITE("cubin_parameters")
{
    TEST_CASE("every target's cubin records scalars of 8 to 64 bits, pointers and padded structs at C's offsets")
    {
        for (const char* target : {"sm_80", "sm_90", "sm_90a"}) {
            CAPTURE(target);
            std::string bytes = cubin(target);
            CHECK(read(bytes, "mixed") == mixed_layout);
            CHECK(read(bytes, "empty").empty());
            // int, double, then a struct of an int, a 40-byte view and a bool: 56 bytes aligned to 8.
            CHECK(read(bytes, mangled_entry(bytes)) == Layout{{0, 4}, {8, 8}, {16, 56}});
            // Past 4 KiB: KPARAM_INFO_V2 records.
            CHECK(read(bytes, "huge") == Layout{{0, 8000}, {8000, 8}, {8008, 8}});
        }
    }

    TEST_CASE("what is not a cubin of the entry has no layout, and is no error")
    {
        CHECK_FALSE(read_cubin_parameters(cubin("sm_90"), "no_such_kernel", "kparam.cubin"));
        CHECK_FALSE(read_cubin_parameters(".version 8.0\n.target sm_90\n.entry mixed()\n{ ret; }", "mixed", "k.ptx"));
        CHECK_FALSE(read_cubin_parameters("", "mixed", "k.cubin"));
    }

    TEST_CASE("the runtime's packing from the declaration and the struct header equals every cubin's layout")
    {
        StructLayouts structs = test_structs();
        CHECK(structs.at("Padded").size == 24);
        CHECK(structs.at("Padded").alignment == 8);
        CHECK(structs.at("Viewish").size == 56);
        CHECK(structs.at("Huge").size == 8000);  // an array field, laid out as nvcc does (the cubin agrees below)
        CHECK(structs.count("Array2D") == 0);    // a template: its layout depends on its arguments
        for (const char* target : {"sm_80", "sm_90", "sm_90a"}) {
            CAPTURE(target);
            std::string bytes = cubin(target);
            for (std::string name : {"mixed", "empty", "mangled", "huge"}) {
                CAPTURE(name);
                std::string entry = name == "mangled" ? mangled_entry(bytes) : name;
                auto parameters = declared(name);
                auto found = read_cubin_parameters(bytes, entry, "kparam.cubin");
                REQUIRE(found);
                CHECK(layout_mismatch(name, parameters, packed_layout(parameters, structs), *found) == "");
            }
        }
    }

    TEST_CASE(
        "structs aligned past 16 bytes sit where each target's parameter bank puts them: sm_80, sm_90, sm_100, "
        "sm_120")
    {
        StructLayouts structs =
            read_struct_layouts(util::read_file(cubin_dir() / "aligned_structs.cuh"), "aligned_structs.cuh");
        std::string source = util::read_file(cubin_dir() / "aligned_params.cu");
        auto declared_aligned = [&](const std::string& name) {
            return read_global_signature(source, name, cubin_dir() / "aligned_params.cu").parameters;
        };
        // What the cubins record (offset, size): the pointer's 8 bytes, then
        // a 32- or 64-aligned struct placed by its address in the bank.
        const std::map<std::string, std::map<std::string, Layout>> recorded = {
            {"sm_80", {{"pointer_a32", {{0, 8}, {32, 32}}}, {"pointer_a64", {{0, 8}, {32, 64}}}}},
            {"sm_90", {{"pointer_a32", {{0, 8}, {16, 32}}}, {"pointer_a64", {{0, 8}, {48, 64}}}}},
            {"sm_100", {{"pointer_a32", {{0, 8}, {32, 32}}}, {"pointer_a64", {{0, 8}, {64, 64}}}}},
            {"sm_120", {{"pointer_a32", {{0, 8}, {32, 32}}}, {"pointer_a64", {{0, 8}, {64, 64}}}}},
        };
        for (const auto& [target, layouts] : recorded) {
            CAPTURE(target);
            std::string bytes = util::read_file(cubin_dir() / ("aligned_params." + target + ".cubin"));
            for (const auto& [name, layout] : layouts) CHECK(read(bytes, name) == layout);
            for (std::string name : {"pointer_a16", "pointer_a32", "pointer_a64", "char_a32_int", "pointer_a64_a32",
                                     "int_small_small", "three_pointers_a64"}) {
                CAPTURE(name);
                auto parameters = declared_aligned(name);
                auto found = read_cubin_parameters(bytes, name, "aligned_params.cubin");
                REQUIRE(found);
                auto packed = packed_layout(parameters, structs, parameter_bank_offset(target));
                CHECK(layout_mismatch(name, parameters, packed, *found) == "");
            }
        }
        // The bank of sm_90 moves them; a bank-blind C layout would call the cubin wrong.
        std::string sm_90 = util::read_file(cubin_dir() / "aligned_params.sm_90.cubin");
        auto parameters = declared_aligned("pointer_a32");
        CHECK(layout_mismatch("pointer_a32", parameters, packed_layout(parameters, structs),
                              *read_cubin_parameters(sm_90, "pointer_a32", "aligned_params.cubin")) != "");
        CHECK(parameter_bank_offset("sm_75") == 0x160);
        CHECK(parameter_bank_offset("sm_90a") == 0x210);
        CHECK(parameter_bank_offset("sm_100f") == 0x380);
        CHECK(parameter_bank_offset("compute_90") == 0);
    }

    TEST_CASE("a struct laid out otherwise, a parameter of another type and another count are named with both layouts")
    {
        auto found = *read_cubin_parameters(cubin("sm_90"), "mixed", "kparam.cubin");
        auto parameters = declared("mixed");
        SUBCASE("a field added to the struct")
        {
            StructLayouts structs = test_structs();
            structs["Padded"].size = 32;
            std::string message = layout_mismatch("mixed", parameters, packed_layout(parameters, structs), found);
            CHECK(message.find("kernel 'mixed': argument 3 (Padded p): the cubin has offset 24, 24 bytes, the runtime "
                               "packs offset 24, 32 bytes") != std::string::npos);
        }
        SUBCASE("a struct aligned to 16 moves it")
        {
            StructLayouts structs = {{"Padded", {32, 16}}};
            std::string message = layout_mismatch("mixed", parameters, packed_layout(parameters, structs), found);
            CHECK(message.find("argument 3 (Padded p): the cubin has offset 24, 24 bytes, the runtime packs offset 32, "
                               "32 bytes") != std::string::npos);
        }
        SUBCASE("a 64-bit integer where the cubin has 32 bits")
        {
            parameters[2].element = ElementType::int64;
            std::string message =
                layout_mismatch("mixed", parameters, packed_layout(parameters, test_structs()), found);
            CHECK(message.find("argument 2 (int n): the cubin has offset 16, 4 bytes, the runtime packs offset 16, 8 "
                               "bytes") != std::string::npos);
        }
        SUBCASE("a wider type than the cubin's")
        {
            parameters[9].element = ElementType::float32;
            parameters[8].element = ElementType::float64;
            std::string message =
                layout_mismatch("mixed", parameters, packed_layout(parameters, test_structs()), found);
            CHECK(message.find("argument 8 (unsigned char u): the cubin has offset 80, 1 bytes, the runtime packs "
                               "offset 80, 8 bytes") != std::string::npos);
        }
        SUBCASE("one parameter fewer")
        {
            parameters.pop_back();
            std::string message =
                layout_mismatch("mixed", parameters, packed_layout(parameters, test_structs()), found);
            CHECK(message.find("the cubin takes 10 parameters, its declaration 9") != std::string::npos);
        }
        SUBCASE("a struct without a layout is not compared, nor are the offsets after it")
        {
            StructLayouts none;
            auto packed = packed_layout(parameters, none);
            CHECK_FALSE(packed[3].size);
            CHECK_FALSE(packed[4].offset);
            CHECK(*packed[4].size == 4);
            CHECK(layout_mismatch("mixed", parameters, packed, found) == "");
        }
    }

    TEST_CASE("without cuFuncGetParamInfo the runtime checks a module's parameters with the cubin's records")
    {
        auto parameters = declared("mixed");
        CHECK_NOTHROW(load_mixed(parameters));
        parameters[2].element = ElementType::int64;
        CHECK_THROWS_WITH_AS(
            load_mixed(parameters),
            doctest::Contains("argument 2 (int n) takes 4 bytes in the module's entry mixed, not the 8"),
            ArtifactError);
        parameters = declared("mixed");
        parameters.pop_back();
        CHECK_THROWS_WITH_AS(load_mixed(parameters), doctest::Contains("the module's entry mixed takes 10 parameters"),
                             ArtifactError);
    }

    TEST_CASE("struct layouts follow C: padding inside and at the end, views of 8-byte words, nested structs")
    {
        std::string header = R"(
// Generated by cunumpy.arguments.CudaStruct from the Python definition; do not edit.
#include "cunumpy/array_view.cuh"
struct A { char c; double d; int i; };
struct B { bool flag; Array2D<double> view; CArray1D<float> flat; short s; };
struct C { A a; char tail; };
struct D { int bits : 3; };
struct E { Unknown u; };
struct F { float* p; unsigned long long n; complex<double> z; };
)";
        StructLayouts layouts = read_struct_layouts(header, "args.cuh");
        CHECK(layouts.at("A").size == 24);
        CHECK(layouts.at("B").size == 8 + 40 + 16 + 8);
        CHECK(layouts.at("C").size == 32);
        CHECK(layouts.count("D") == 0);
        CHECK(layouts.count("E") == 0);
        CHECK(layouts.at("F").size == 32);
    }

    TEST_CASE("a damaged section is an error naming the artifact, the section and the byte, never a crash")
    {
        std::string good = cubin("sm_90");
        auto span = section_span(good, ".nv.info.mixed");
        std::size_t record = first_parameter_record(good, span);
        SUBCASE("the file ends inside the section")
        {
            // nvcc writes the section headers after the sections: none are left to find it by.
            CHECK_FALSE(read_cubin_parameters(good.substr(0, span.first + span.second / 2), "mixed", "k"));
        }
        SUBCASE("a section that runs past the end of the file")
        {
            std::string bytes = good;
            Elf64_Ehdr header{};
            std::memcpy(&header, bytes.data(), sizeof header);
            for (unsigned i = 0; i < header.e_shnum; ++i) {
                Elf64_Shdr section{};
                std::size_t at = header.e_shoff + i * header.e_shentsize;
                std::memcpy(&section, bytes.data() + at, sizeof section);
                if (section.sh_offset != span.first) continue;
                section.sh_size = bytes.size();
                std::memcpy(bytes.data() + at, &section, sizeof section);
            }
            CHECK(damaged_error(bytes).find(
                      "kparam.sm_90.cubin: section .nv.info.mixed runs past the end of the file") != std::string::npos);
        }
        SUBCASE("a record longer than the section")
        {
            std::string bytes = good;
            std::uint16_t length = 0xffff;
            std::memcpy(bytes.data() + record + 2, &length, 2);
            std::string error = damaged_error(bytes);
            CHECK(error.find("section .nv.info.mixed, byte " + std::to_string(record - span.first) +
                             ": a record of 65535 bytes runs past the section's end") != std::string::npos);
            CHECK(error.find("rebuild it (cunumpy-kernels build)") != std::string::npos);
        }
        SUBCASE("a parameter record of the wrong length")
        {
            std::string bytes = good;
            bytes[record + 2] = 8;  // 8 of its 12 bytes; the next record then starts inside it
            CHECK(damaged_error(bytes).find("a parameter record of 8 bytes, not 12") != std::string::npos);
        }
        SUBCASE("an unknown record format")
        {
            std::string bytes = good;
            bytes[span.first] = 9;
            CHECK(damaged_error(bytes).find("byte 0: unknown record format 9") != std::string::npos);
        }
        SUBCASE("a parameter described twice, one never")
        {
            std::string bytes = good;
            std::uint16_t ordinal = 0;  // the first record is the last parameter's
            std::memcpy(bytes.data() + record + 4 + 4, &ordinal, 2);
            CHECK(damaged_error(bytes).find("parameter 0 is described twice") != std::string::npos);
        }
        SUBCASE("parameters that overlap")
        {
            std::string bytes = good;
            std::uint16_t offset = 76;  // the last parameter moved into `raw`'s 8 bytes at 72
            std::memcpy(bytes.data() + record + 4 + 6, &offset, 2);
            CHECK(damaged_error(bytes).find("parameters 7 and 9 overlap") != std::string::npos);
        }
        SUBCASE("every prefix of the file and every byte of the section changed: a layout, nothing or an ArtifactError")
        {
            auto survives = [](const std::string& bytes) {
                try {
                    read_cubin_parameters(bytes, "mixed", "k");
                } catch (const ArtifactError&) {
                }
            };
            for (std::size_t size = 0; size <= good.size(); size += 7) survives(good.substr(0, size));
            for (std::size_t at = span.first; at < span.first + span.second; ++at)
                for (unsigned char value : {0x00, 0x01, 0x04, 0x17, 0x45, 0x7f, 0xff}) {
                    std::string bytes = good;
                    bytes[at] = static_cast<char>(value);
                    survives(bytes);
                }
        }
    }

}  // TEST_SUITE
