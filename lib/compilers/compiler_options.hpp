// Compiler options as the key needs them: parsed, never passed through blind.
//
// An option the user adds (`--compiler-option`, `options` in pyproject.toml,
// NVCC_PREPEND_FLAGS and NVCC_APPEND_FLAGS) is one of three kinds:
//  - it adds an include folder or a forced include (`-I`, `-isystem`,
//    `-include`, in nvcc's and NVRTC's spellings): it joins the include
//    search, so the headers found through it are scanned and hashed;
//  - it sets the target or the output kind (`-arch`, `-gencode`, `-rdc`,
//    `-G`, `-ptx`, `-o`, ...): the tool owns those (one artifact per target,
//    whole-program code cuModuleLoadData can load), so it is refused;
//  - anything else (`-D`, `-std`, `--use_fast_math`, unknown ones too) is
//    passed to the compiler as given and is part of the key.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ck {

struct CompilerOptions {
    std::vector<std::string> keyed;                       ///< passed as given, in order; part of the key
    std::vector<std::filesystem::path> include_dirs;      ///< `-I`, in order
    std::vector<std::filesystem::path> system_include_dirs;  ///< `-isystem`, in order
    std::vector<std::string> pre_includes;                ///< `-include` operands, in order
    std::vector<std::string> unknown;                     ///< keyed options this parser does not know (warned about)
};

/// Parses `options` (one argument each; a value may be the next argument).
/// `where` names their origin in messages ("--compiler-option",
/// "pyproject.toml: options", "NVCC_APPEND_FLAGS"). Throws UsageError for an
/// option that sets the target or output kind (naming `--arch` or the config
/// key to use instead), for `-Xcompiler` carrying an include option, and for
/// an option missing its value.
CompilerOptions parse_compiler_options(const std::vector<std::string>& options, const std::string& where);

/// Appends `more` to `into`: keyed options and each folder list in order.
void append_compiler_options(CompilerOptions& into, const CompilerOptions& more);

// resolve_compiler_options (config.hpp) makes include folders absolute for
// the loaders of flags and pyproject.toml.

/// Splits an environment variable's flags at white space, as nvcc does;
/// single and double quotes group words.
std::vector<std::string> split_flags(const std::string& text);

}  // namespace ck
