#include "compilers/artifact_check.hpp"

#include "compilers/cuda_elf.hpp"
#include "compilers/entry_symbols.hpp"

#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

namespace ck {

namespace {

// EM_CUDA; <elf.h> of glibc 2.36 defines it, older ones may not.
constexpr std::uint16_t em_cuda = 190;

// Functions a module may leave undefined: the driver supplies them when it
// loads a cubin or JIT-compiles PTX (printf, assert and device malloc).
const std::set<std::string> driver_functions = {"vprintf", "malloc", "free", "__assertfail"};

const char* const option_advice =
    "a compiler option (--compiler-option, `options` in pyproject.toml, or NVCC_APPEND_FLAGS for nvcc) "
    "sets another architecture than the target's: remove it and choose targets with --arch";

[[noreturn]] void fail(ArtifactCheck check, const ArtifactExpectation& expected, const std::string& finding,
                       const std::string& advice)
{
    throw ArtifactCheckError(check, finding,
                             expected.name + " for " + expected.target + ": check '" + to_string(check) +
                                 "' failed: " + finding + "; " + advice);
}

// `sm_90a` -> {90, "a"}; `compute_100f` -> {100, "f"}.
struct TargetName {
    int number = 0;
    std::string suffix;
};

TargetName parse_target(const std::string& target)
{
    TargetName parsed;
    auto underscore = target.find('_');
    if (underscore == std::string::npos) return parsed;
    std::size_t end = underscore + 1;
    while (end < target.size() && std::isdigit(static_cast<unsigned char>(target[end]))) ++end;
    parsed.number = std::atoi(target.substr(underscore + 1, end - underscore - 1).c_str());
    parsed.suffix = target.substr(end);
    return parsed;
}

std::string hex(std::uint32_t value)
{
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", value);
    return text;
}

std::string joined(const std::vector<std::string>& names)
{
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
}

void check_architecture(const CudaElfHeader& header, const ArtifactExpectation& expected)
{
    TargetName target = parse_target(expected.target);
    int sm = cuda_elf_sm(header);
    std::string found = "sm_" + std::to_string(sm) + (cuda_elf_accelerated(header) ? "a" : "");
    std::string flags =
        " (ELF e_flags " + hex(header.flags) + ", ABI version " + std::to_string(header.abi_version) + ")";
    if (sm != target.number)
        fail(ArtifactCheck::architecture, expected, "the cubin is for " + found + flags + ", not " + expected.target,
             option_advice);
    if (cuda_elf_accelerated(header) && target.suffix != "a")
        fail(ArtifactCheck::architecture, expected,
             "the cubin uses architecture-specific features of " + found + flags + ", which run on no other GPU",
             "build it for " + found + " (--arch " + found + ")");
}

void check_symbols(const std::string& cubin, const ArtifactExpectation& expected)
{
    auto symbols = read_elf_symbols(cubin);
    bool has_entry = std::any_of(symbols.begin(), symbols.end(), [&](const ElfSymbol& s) {
        return s.defined && s.type == STT_FUNC && s.name == expected.entry_symbol;
    });
    if (!has_entry)
        fail(ArtifactCheck::entry, expected, "the cubin defines no function '" + expected.entry_symbol + "'",
             "the kernel's __global__ function was not compiled into it: check its declaration in the source, "
             "and compiler options that change the output");
    std::vector<std::string> undefined;
    for (const auto& s : symbols)
        if (!s.defined && s.bind == STB_GLOBAL && !s.name.empty() && !driver_functions.count(s.name))
            undefined.push_back(s.name);
    if (!undefined.empty())
        fail(ArtifactCheck::undefined_symbols, expected, "undefined symbols " + joined(undefined),
             "define them in the kernel's source or a header it includes: nothing is linked to a kernel");
}

// The PTX without its // and /* */ comments (PTX has no string literals).
std::string without_comments(const std::string& ptx)
{
    std::string text;
    text.reserve(ptx.size());
    for (std::size_t i = 0; i < ptx.size(); ++i) {
        if (ptx.compare(i, 2, "//") == 0) {
            i = ptx.find('\n', i);
            if (i == std::string::npos) break;
        } else if (ptx.compare(i, 2, "/*") == 0) {
            i = ptx.find("*/", i + 2);
            if (i == std::string::npos) break;
            ++i;
            continue;
        }
        text += ptx[i];
    }
    return text;
}

// The `{` and `}` of a PTX text outside its string literals (`.file 1
// "/a{b}/k.cu"` in a debug build names any path).
std::pair<std::size_t, std::size_t> brace_counts(const std::string& ptx)
{
    std::size_t opened = 0, closed = 0;
    bool quoted = false;
    for (char c : ptx) {
        if (c == '"')
            quoted = !quoted;
        else if (c == '\n')
            quoted = false;  // PTX strings never span lines
        else if (!quoted && c == '{')
            ++opened;
        else if (!quoted && c == '}')
            ++closed;
    }
    return {opened, closed};
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%'; }

// The first field of the `.target` directive ("sm_90" of ".target sm_90, debug").
std::string ptx_target(const std::string& ptx)
{
    for (std::size_t at = ptx.find(".target"); at != std::string::npos; at = ptx.find(".target", at + 1)) {
        std::size_t start = at + 7;
        if (start < ptx.size() && is_name_char(ptx[start])) continue;  // `.targets`, not the directive
        while (start < ptx.size() && (ptx[start] == ' ' || ptx[start] == '\t')) ++start;
        std::size_t end = start;
        while (end < ptx.size() && is_name_char(ptx[end])) ++end;
        return ptx.substr(start, end - start);
    }
    return {};
}

// A `.func` directive: a declaration (`;` after the parameters) or a
// definition (a body), external when its line says `.extern`.
struct PtxFunction {
    std::string name;
    bool external = false;
    bool defined = false;
};

std::vector<PtxFunction> ptx_functions(const std::string& ptx)
{
    std::vector<PtxFunction> functions;
    for (std::size_t at = ptx.find(".func"); at != std::string::npos; at = ptx.find(".func", at + 1)) {
        std::size_t i = at + 5;
        if (i < ptx.size() && is_name_char(ptx[i])) continue;
        std::size_t line = ptx.rfind('\n', at);
        line = line == std::string::npos ? 0 : line;
        PtxFunction function;
        function.external = ptx.substr(line, at - line).find(".extern") != std::string::npos;
        while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i]))) ++i;
        if (i < ptx.size() && ptx[i] == '(') i = ptx.find(')', i);  // the return parameter
        if (i == std::string::npos) break;
        while (i < ptx.size() && !is_name_char(ptx[i])) ++i;
        std::size_t end = i;
        while (end < ptx.size() && is_name_char(ptx[end])) ++end;
        function.name = ptx.substr(i, end - i);
        std::size_t next = ptx.find_first_of("{;", end);
        function.defined = next != std::string::npos && ptx[next] == '{';
        functions.push_back(std::move(function));
    }
    return functions;
}

void check_externs(const std::string& ptx, const ArtifactExpectation& expected)
{
    auto functions = ptx_functions(ptx);
    std::vector<std::string> unresolved;
    for (const auto& f : functions) {
        if (!f.external || f.defined || driver_functions.count(f.name)) continue;
        bool defined = std::any_of(functions.begin(), functions.end(),
                                   [&](const PtxFunction& g) { return g.defined && g.name == f.name; });
        if (!defined && std::find(unresolved.begin(), unresolved.end(), f.name) == unresolved.end())
            unresolved.push_back(f.name);
    }
    if (!unresolved.empty())
        fail(ArtifactCheck::ptx_externs, expected, "unresolved .extern .func " + joined(unresolved),
             "define them in the kernel's source or a header it includes: the driver links nothing to a kernel's PTX");
}

}  // namespace

const char* to_string(ArtifactCheck check)
{
    switch (check) {
        case ArtifactCheck::cuda_elf:
            return "cuda elf";
        case ArtifactCheck::complete:
            return "complete";
        case ArtifactCheck::executable:
            return "executable";
        case ArtifactCheck::architecture:
            return "architecture";
        case ArtifactCheck::entry:
            return "entry";
        case ArtifactCheck::undefined_symbols:
            return "undefined symbols";
        case ArtifactCheck::ptx_complete:
            return "ptx complete";
        case ArtifactCheck::ptx_target:
            return "ptx target";
        case ArtifactCheck::ptx_entry:
            return "ptx entry";
        case ArtifactCheck::ptx_externs:
            return "ptx externs";
        case ArtifactCheck::parameter_layout:
            return "parameter layout";
    }
    return "?";
}

void check_cubin(const std::string& cubin, const ArtifactExpectation& expected)
{
    auto header = read_elf_header(cubin);
    if (!header || header->machine != em_cuda)
        fail(ArtifactCheck::cuda_elf, expected,
             header ? "an ELF file for machine " + std::to_string(header->machine) + ", not CUDA (190)"
                    : "not an ELF64 file",
             "a compiler option changed the output kind: remove it");
    if (std::uint64_t extent = elf_extent(cubin); extent > cubin.size())
        fail(ArtifactCheck::complete, expected,
             "the file is " + std::to_string(cubin.size()) + " bytes, but its ELF headers describe " +
                 std::to_string(extent) + ": it was cut short",
             "build it again: a compiler that is interrupted or runs out of disk leaves a partial file");
    if (header->type != ET_EXEC)
        fail(ArtifactCheck::executable, expected,
             header->type == ET_REL ? "the cubin is relocatable (ELF type ET_REL), as -rdc=true or -dc make it, and "
                                      "cuModuleLoadData cannot load it"
                                    : "the cubin's ELF type is " + std::to_string(header->type) + ", not ET_EXEC",
             "remove -rdc=true, -dc or --relocatable-device-code from the compiler options: a kernel is compiled "
             "alone, with no device link");
    check_architecture(*header, expected);
    check_symbols(cubin, expected);
}

void check_ptx(const std::string& ptx, const ArtifactExpectation& expected)
{
    std::string text = without_comments(ptx);
    auto [opened, closed] = brace_counts(text);
    if (opened != closed)
        fail(ArtifactCheck::ptx_complete, expected,
             "the PTX opens " + std::to_string(opened) + " braces and closes " + std::to_string(closed) +
                 ": it was cut short",
             "build it again: a compiler that is interrupted or runs out of disk leaves a partial file");
    TargetName target = parse_target(expected.target);
    std::string wanted = "sm_" + std::to_string(target.number) + target.suffix;
    std::string found = ptx_target(text);
    if (found != wanted)
        fail(ArtifactCheck::ptx_target, expected,
             found.empty() ? "the PTX has no .target directive" : "the PTX is for .target " + found + ", not " + wanted,
             option_advice);
    auto entries = ptx_entries(text);
    if (std::find(entries.begin(), entries.end(), expected.entry_symbol) == entries.end())
        fail(ArtifactCheck::ptx_entry, expected, "the PTX has no .entry " + expected.entry_symbol,
             "the kernel's __global__ function was not compiled into it: check its declaration in the source, "
             "and compiler options that change the output");
    check_externs(text, expected);
}

void check_artifact(const std::string& bytes, const ArtifactExpectation& expected)
{
    if (expected.target.rfind("compute_", 0) == 0)
        check_ptx(bytes, expected);
    else
        check_cubin(bytes, expected);
}

}  // namespace ck
