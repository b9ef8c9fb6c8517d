#include "compilers/cuda_compiler.hpp"
#include "compilers/entry_symbols.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("entry_symbols");

using namespace ck;

TEST_CASE("pick_entry_symbol: extern \"C\" name or a unique mangled free function")
{
    CHECK(pick_entry_symbol({"helper", "push"}, "push") == "push");
    CHECK(pick_entry_symbol({"_Z4pushPdl", "_Z7depositPd"}, "push") == "_Z4pushPdl");
    CHECK(pick_entry_symbol({"_Z4pushPdl", "_Z4pushPfl"}, "push").empty());
    CHECK(pick_entry_symbol({"_Z5push2Pd"}, "push").empty());
    CHECK(pick_entry_symbol({}, "push").empty());
}

TEST_CASE("ptx_entries lists .entry names")
{
    std::string ptx =
        ".version 8.0\n.target sm_90\n.visible .entry push(\n.param .u64 p\n)\n"
        ".visible .entry _Z7depositPd(\n";
    CHECK(ptx_entries(ptx) == std::vector<std::string>{"push", "_Z7depositPd"});
}

TEST_CASE("elf_function_symbols rejects what is not ELF64")
{
    CHECK(elf_function_symbols("").empty());
    CHECK(elf_function_symbols("not an elf file at all, just text").empty());
    CHECK(elf_function_symbols(std::string("\x7f"
                                           "ELF\x01",
                                           5) +
                               std::string(60, '\0'))
              .empty());
}

TEST_CASE("diagnostics are rewritten to file:line")
{
    CHECK(to_file_line_diagnostics("/src/push_cuda.cu(12): error: identifier \"y\" is undefined\n"
                                   "  detected during instantiation\n"
                                   "/src/push_cuda.cu(3): warning: unused\n") ==
          "/src/push_cuda.cu:12: error: identifier \"y\" is undefined\n"
          "  detected during instantiation\n"
          "/src/push_cuda.cu:3: warning: unused\n");
    CHECK(artifact_extension("sm_90") == "cubin");
    CHECK(artifact_extension("compute_90") == "ptx");
}

TEST_SUITE_END();
