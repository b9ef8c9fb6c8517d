#include "compilers/forwarded_options.hpp"
#include "compilers/option_lists.hpp"

#include "cunumpy_kernels/error.hpp"

#include <array>
#include <vector>

namespace ck {

namespace {

// What a part of -Xcompiler or -Xptxas does to the key.
enum class Rule { keyed, takes_value, refused };

struct Entry {
    const char* name;
    bool prefix;  // matches names that start with it (`-f...`), else the name whole or with `=value`
    Rule rule;
    const char* why = "";  // refused: why, and what to use instead
};

constexpr const char* use_include_options =
    "pass include folders and forced includes as -I, -isystem and -include, so that the headers found through "
    "them are in the key";
constexpr const char* reads_a_file =
    "it makes the host compiler read a file the cache key does not hold; define what it provides with -D, or "
    "include it from the source";
constexpr const char* response_file =
    "a response file is read behind the key's back; write its options into --options-file (whose content the key "
    "holds) or as --compiler-option";
constexpr const char* host_output =
    "nvcc runs the host compiler for its own steps; its output and dependency files are the tool's";
constexpr const char* ptxas_target = "set targets with --arch (config key arch)";
constexpr const char* ptxas_output = "the tool chooses the output (one cubin per --arch target)";
constexpr const char* ptxas_debug = "device debug code is not cached; use -lineinfo for source lines in profiles";
constexpr const char* ptxas_files =
    "ptxas would read a file the cache key does not hold; pass the options themselves in -Xptxas";

// gcc's options, from its manual (Preprocessor, Code Gen, Optimize, Warning,
// Debugging, Machine-Dependent, C++ Dialect options). Readers come before the
// prefixes that would cover them (`-fplugin` before `-f`).
constexpr std::array host_table = {
    Entry{"-I", true, Rule::refused, use_include_options},
    Entry{"-isystem", true, Rule::refused, use_include_options},
    Entry{"-include", true, Rule::refused, use_include_options},
    Entry{"-iquote", true, Rule::refused, use_include_options},
    Entry{"-idirafter", true, Rule::refused, use_include_options},
    Entry{"-imacros", true, Rule::refused, reads_a_file},
    Entry{"-iprefix", true, Rule::refused, reads_a_file},
    Entry{"-iwithprefix", true, Rule::refused, reads_a_file},
    Entry{"-iwithprefixbefore", true, Rule::refused, reads_a_file},
    Entry{"-isysroot", true, Rule::refused, reads_a_file},
    Entry{"-imultilib", true, Rule::refused, reads_a_file},
    Entry{"-iplugindir", true, Rule::refused, reads_a_file},
    Entry{"--sysroot", true, Rule::refused, reads_a_file},
    Entry{"-specs", true, Rule::refused, reads_a_file},
    Entry{"--specs", true, Rule::refused, reads_a_file},
    Entry{"-B", true, Rule::refused, reads_a_file},
    Entry{"-imultiarch", true, Rule::refused, reads_a_file},
    // gcc's -f options that read files or folders (its manual's option
    // index, gcc 14): plugins, profiles, module files and mappers, the
    // self-test folder, the LTO cache.
    Entry{"-fplugin", true, Rule::refused, reads_a_file},
    Entry{"-fprofile-use", true, Rule::refused, reads_a_file},
    Entry{"-fprofile-dir", true, Rule::refused, reads_a_file},
    Entry{"-fprofile-prefix-path", true, Rule::refused, reads_a_file},
    Entry{"-fauto-profile", true, Rule::refused, reads_a_file},
    Entry{"-fprofile-sample-use", true, Rule::refused, reads_a_file},
    Entry{"-fsanitize-ignorelist", true, Rule::refused, reads_a_file},
    Entry{"-fsanitize-blacklist", true, Rule::refused, reads_a_file},
    Entry{"-fsanitize-coverage-allowlist", true, Rule::refused, reads_a_file},
    Entry{"-fsanitize-coverage-ignorelist", true, Rule::refused, reads_a_file},
    Entry{"-fmodule-mapper", true, Rule::refused, reads_a_file},
    Entry{"-fmodules", true, Rule::refused, reads_a_file},
    Entry{"-fmodule-header", true, Rule::refused, reads_a_file},
    Entry{"-fmodule-only", true, Rule::refused, reads_a_file},
    Entry{"-fself-test", true, Rule::refused, reads_a_file},
    Entry{"-flto-incremental", true, Rule::refused, reads_a_file},
    Entry{"-fpch-preprocess", true, Rule::refused, reads_a_file},
    Entry{"-Wa", false, Rule::refused,
          "it passes options to the assembler unchecked (-Wa,-I and -Wa,@FILE read files)"},
    Entry{"-Wl", false, Rule::refused, "nvcc keeps only the device code; nothing is linked"},
    Entry{"-fdirectives-only", true, Rule::keyed},
    Entry{"-Wp", false, Rule::refused,
          "-Wp passes options to the preprocessor unchecked; pass them to -Xcompiler directly"},
    Entry{"-Xpreprocessor", false, Rule::refused,
          "it passes options to the preprocessor unchecked; pass them to -Xcompiler directly"},
    Entry{"-o", true, Rule::refused, host_output},
    Entry{"-E", false, Rule::refused, host_output},
    Entry{"-S", false, Rule::refused, host_output},
    Entry{"-c", false, Rule::refused, host_output},
    Entry{"-x", true, Rule::refused, host_output},
    Entry{"-M", true, Rule::refused, host_output},
    Entry{"-save-temps", true, Rule::refused, host_output},
    Entry{"-D", false, Rule::takes_value},
    Entry{"-U", false, Rule::takes_value},
    Entry{"-D", true, Rule::keyed},
    Entry{"-U", true, Rule::keyed},
    Entry{"-O", true, Rule::keyed},
    Entry{"-f", true, Rule::keyed},
    Entry{"-W", true, Rule::keyed},
    Entry{"-m", true, Rule::keyed},
    Entry{"-g", true, Rule::keyed},
    Entry{"-std=", true, Rule::keyed},
    Entry{"-ansi", false, Rule::keyed},
    Entry{"-pedantic", true, Rule::keyed},
    Entry{"-w", false, Rule::keyed},
    Entry{"-pthread", false, Rule::keyed},
    Entry{"-p", false, Rule::keyed},
    Entry{"-pg", false, Rule::keyed},
    Entry{"-P", false, Rule::keyed},
    Entry{"-C", false, Rule::keyed},
    Entry{"-CC", false, Rule::keyed},
    Entry{"-undef", false, Rule::keyed},
    Entry{"-nostdinc", false, Rule::keyed},
    Entry{"-nostdinc++", false, Rule::keyed},
    Entry{"-trigraphs", false, Rule::keyed},
    Entry{"-v", false, Rule::keyed},
    Entry{"-H", false, Rule::keyed},
    Entry{"-Q", false, Rule::keyed},
};

// `ptxas --help` (CUDA 13.0): long and short names.
constexpr std::array ptxas_table = {
    Entry{"--gpu-name", false, Rule::refused, ptxas_target},
    Entry{"-arch", false, Rule::refused, ptxas_target},
    Entry{"--output-file", false, Rule::refused, ptxas_output},
    Entry{"-o", false, Rule::refused, ptxas_output},
    Entry{"--compile-only", false, Rule::refused, ptxas_output},
    Entry{"-c", false, Rule::refused, ptxas_output},
    Entry{"--input-as-string", false, Rule::refused, ptxas_output},
    Entry{"-ias", false, Rule::refused, ptxas_output},
    Entry{"--extensible-whole-program", false, Rule::refused, ptxas_output},
    Entry{"-ewp", false, Rule::refused, ptxas_output},
    Entry{"--device-debug", false, Rule::refused, ptxas_debug},
    Entry{"-g", false, Rule::refused, ptxas_debug},
    Entry{"--options-file", false, Rule::refused, ptxas_files},
    Entry{"-optf", false, Rule::refused, ptxas_files},
    Entry{"--opt-level", false, Rule::takes_value},
    Entry{"--Ofast-compile", false, Rule::takes_value},
    Entry{"-Ofc", false, Rule::takes_value},
    Entry{"--allow-expensive-optimizations", false, Rule::takes_value},
    Entry{"-allow-expensive-optimizations", false, Rule::takes_value},
    Entry{"--compile-as-tools-patch", false, Rule::keyed},
    Entry{"-astoolspatch", false, Rule::keyed},
    Entry{"--compiler-annotations", false, Rule::keyed},
    Entry{"-annotate", false, Rule::keyed},
    Entry{"--def-load-cache", false, Rule::takes_value},
    Entry{"-dlcm", false, Rule::takes_value},
    Entry{"--def-store-cache", false, Rule::takes_value},
    Entry{"-dscm", false, Rule::takes_value},
    Entry{"--device-function-maxrregcount", false, Rule::takes_value},
    Entry{"-func-maxrregcount", false, Rule::takes_value},
    Entry{"--device-stack-protector", false, Rule::takes_value},
    Entry{"-device-stack-protector", false, Rule::takes_value},
    Entry{"--disable-optimizer-constants", false, Rule::keyed},
    Entry{"-disable-optimizer-consts", false, Rule::keyed},
    Entry{"--disable-warnings", false, Rule::keyed},
    Entry{"-w", false, Rule::keyed},
    Entry{"--dont-merge-basicblocks", false, Rule::keyed},
    Entry{"-no-bb-merge", false, Rule::keyed},
    Entry{"--entry", false, Rule::takes_value},
    Entry{"-e", false, Rule::takes_value},
    Entry{"--fmad", false, Rule::takes_value},
    Entry{"-fmad", false, Rule::takes_value},
    Entry{"--force-load-cache", false, Rule::keyed},
    Entry{"-flcm", false, Rule::keyed},
    Entry{"--force-store-cache", false, Rule::keyed},
    Entry{"-fscm", false, Rule::keyed},
    Entry{"--g-tensor-memory-access-check", false, Rule::keyed},
    Entry{"-g-tmem-access-check", false, Rule::keyed},
    Entry{"--gno-tensor-memory-access-check", false, Rule::keyed},
    Entry{"-gno-tmem-access-check", false, Rule::keyed},
    Entry{"--generate-line-info", false, Rule::keyed},
    Entry{"-lineinfo", false, Rule::keyed},
    Entry{"--legacy-bar-warp-wide-behavior", false, Rule::keyed},
    Entry{"-legacy-bar-warp-wide-behavior", false, Rule::keyed},
    Entry{"--machine", false, Rule::takes_value},
    Entry{"-m", false, Rule::takes_value},
    Entry{"--make-errors-visible-at-exit", false, Rule::keyed},
    Entry{"-make-errors-visible-at-exit", false, Rule::keyed},
    Entry{"--maxntid", false, Rule::takes_value},
    Entry{"-maxntid", false, Rule::takes_value},
    Entry{"--maxrregcount", false, Rule::takes_value},
    Entry{"-maxrregcount", false, Rule::takes_value},
    Entry{"--minnctapersm", false, Rule::takes_value},
    Entry{"-minnctapersm", false, Rule::takes_value},
    Entry{"--optimize-float-atomics", false, Rule::keyed},
    Entry{"-opt-fp-atomics", false, Rule::keyed},
    Entry{"--override-directive-values", false, Rule::keyed},
    Entry{"-override-directive-values", false, Rule::keyed},
    Entry{"--position-independent-code", false, Rule::takes_value},
    Entry{"-pic", false, Rule::takes_value},
    Entry{"--preserve-relocs", false, Rule::keyed},
    Entry{"-preserve-relocs", false, Rule::keyed},
    Entry{"--register-usage-level", false, Rule::takes_value},
    Entry{"-regUsageLevel", false, Rule::takes_value},
    Entry{"--return-at-end", false, Rule::keyed},
    Entry{"-ret-end", false, Rule::keyed},
    Entry{"--sanitize", false, Rule::takes_value},
    Entry{"-sanitize", false, Rule::takes_value},
    Entry{"--sp-bounds-check", false, Rule::keyed},
    Entry{"-sp-bounds-check", false, Rule::keyed},
    Entry{"--split-compile", false, Rule::takes_value},
    Entry{"-split-compile", false, Rule::takes_value},
    Entry{"--suppress-async-bulk-multicast-advisory-warning", false, Rule::keyed},
    Entry{"-suppress-async-bulk-multicast-advisory-warning", false, Rule::keyed},
    Entry{"--suppress-debug-info", false, Rule::keyed},
    Entry{"-suppress-debug-info", false, Rule::keyed},
    Entry{"--suppress-double-demote-warning", false, Rule::keyed},
    Entry{"-suppress-double-demote-warning", false, Rule::keyed},
    Entry{"--suppress-sparse-mma-advisory-info", false, Rule::keyed},
    Entry{"-suppress-sparse-mma-advisory-info", false, Rule::keyed},
    Entry{"--suppress-stack-size-warning", false, Rule::keyed},
    Entry{"-suppress-stack-size-warning", false, Rule::keyed},
    Entry{"--verbose", false, Rule::keyed},
    Entry{"-v", false, Rule::keyed},
    Entry{"--warn-on-double-precision-use", false, Rule::keyed},
    Entry{"-warn-double-usage", false, Rule::keyed},
    Entry{"--warn-on-local-memory-usage", false, Rule::keyed},
    Entry{"-warn-lmem-usage", false, Rule::keyed},
    Entry{"--warn-on-spills", false, Rule::keyed},
    Entry{"-warn-spills", false, Rule::keyed},
    Entry{"--warning-as-error", false, Rule::keyed},
    Entry{"-Werror", false, Rule::keyed},
    Entry{"-O", true, Rule::keyed},
};

template <std::size_t N>
const Entry* lookup(const std::array<Entry, N>& table, const std::string& part)
{
    for (const auto& entry : table) {
        std::string name = entry.name;
        if (entry.prefix ? part.rfind(name, 0) == 0
                         : part == name || (part.rfind(name + "=", 0) == 0 && entry.rule != Rule::keyed))
            return &entry;
    }
    return nullptr;
}

// Parts after an option that takes its value separately are that value.
template <std::size_t N>
void check_parts(const std::array<Entry, N>& table, const std::string& program, const std::string& value,
                 const std::string& option, const std::string& where)
{
    std::vector<std::string> parts = comma_list_items(value);
    auto refuse = [&](const std::string& part, const std::string& why) {
        std::string named = option.find(part) == std::string::npos ? option + " " + part : option;
        throw UsageError(where + ": " + named + " is not accepted: " + why);
    };
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string& part = parts[i];
        if (part[0] == '@') refuse(part, response_file);
        const Entry* entry = lookup(table, part);
        if (!entry)
            refuse(part, "it is not one of " + program + "'s documented options that cunumpy-kernels knows; " +
                             verbatim_door(option));
        if (entry->rule == Rule::refused) refuse(part, entry->why);
        bool joined = part.find('=') != std::string::npos;
        if (entry->rule == Rule::takes_value && !joined && !entry->prefix) {
            if (i + 1 >= parts.size()) refuse(part, "it needs a value");
            ++i;
        }
    }
}

// `-march=native`, `-mtune=native`, `-mcpu=native`, and any other machine
// option set to `native` or `host` (spellings of gcc and clang): their
// meaning is the build machine's CPU.
bool depends_on_build_machine(const std::string& part)
{
    if (part.rfind("-m", 0) != 0) return false;
    auto equals = part.find('=');
    if (equals == std::string::npos) return false;
    std::string value = part.substr(equals + 1);
    return value == "native" || value == "host";
}

}  // namespace

std::string verbatim_door(const std::string& option)
{
    return "to pass it knowingly, give it as --verbatim-option=" + option +
           " (config key verbatim-options): passed as written after the checked options and keyed by its spelling "
           "only, so what it reads or changes is your responsibility";
}

void check_host_compiler_options(const std::string& value, const std::string& option, const std::string& where)
{
    for (const auto& part : comma_list_items(value))
        if (depends_on_build_machine(part))
            throw UsageError(where + ": " + option + " is not accepted: " + part +
                             " means what the CPU of the machine that builds is, and nvcc's host preprocessor defines "
                             "macros from it (__AVX2__, __AVX512F__, ...) that device code can test, while the cache "
                             "key holds only its spelling: another machine sharing the cache would get this machine's "
                             "artifact. Name the CPU instead, e.g. " +
                             part.substr(0, part.find('=')) + "=x86-64-v3 or " + part.substr(0, part.find('=')) +
                             "=skylake-avx512 (gcc -Q --help=target -march=native shows what native is here)");
    check_parts(host_table, "the host compiler (gcc)", value, option, where);
}

void check_ptxas_options(const std::string& value, const std::string& option, const std::string& where)
{
    check_parts(ptxas_table, "ptxas", value, option, where);
}

}  // namespace ck
