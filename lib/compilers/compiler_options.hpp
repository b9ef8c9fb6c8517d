// Compiler options as the key needs them: parsed, never passed through blind.
//
// An option the user adds (`--compiler-option`, `options` in pyproject.toml,
// NVCC_PREPEND_FLAGS and NVCC_APPEND_FLAGS) is classified from a table of
// nvcc's and NVRTC's documented options (`nvcc --help`, CUDA 13.0):
//  - it adds an include folder or a forced include (`-I`, `-isystem`,
//    `-include`, in nvcc's and NVRTC's spellings): it joins the include
//    search, so the headers found through it are scanned and hashed;
//  - it sets the target or the output kind (`-arch`, `-gencode`, `-rdc`,
//    `-G`, `-ptx`, `-o`, ...): the tool owns those (one artifact per target,
//    whole-program code cuModuleLoadData can load), so it is refused;
//  - it reads a file of options (`--options-file`, `-optf`): the file's words
//    are parsed in its place, so its content is in the key, and the file
//    itself never reaches the compiler;
//  - it passes options on (`-Xcompiler`, `-Xptxas`): each part is checked
//    against the host compiler's or ptxas's table (forwarded_options.hpp);
//  - a documented option that changes code or messages (`-D`, `-std`,
//    `--use_fast_math`, ...) is passed as given and is part of the key;
//  - anything else is refused, naming --verbatim-option (config key
//    verbatim-options): the door for an option passed knowingly, keyed by
//    its spelling only.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ck {

struct CompilerOptions {
    std::vector<std::string> keyed;                          ///< passed as given, in order; part of the key
    std::vector<std::filesystem::path> include_dirs;         ///< `-I`, in order
    std::vector<std::filesystem::path> system_include_dirs;  ///< `-isystem`, in order
    std::vector<std::string> pre_includes;                   ///< `-include` operands, in order
    std::vector<std::filesystem::path> options_files;  ///< the options files read (their words are parsed in place)
    std::vector<std::string> verbatim;  ///< `--verbatim-option=X` operands, unchecked (also in keyed; warned about)
};

/// Parses `options` (one argument each; a value may be the next argument).
/// `where` names their origin in messages ("--compiler-option",
/// "pyproject.toml: options", "NVCC_APPEND_FLAGS"); a relative options file
/// is `base`'s (empty: the working folder's). Throws UsageError for an option
/// that sets the target or output kind (naming `--arch` or the config key to
/// use instead), for a refused part of `-Xcompiler` or `-Xptxas`, for an
/// options file that cannot be read, for an unknown option (naming
/// --verbatim-option) and for an option missing its value.
CompilerOptions parse_compiler_options(const std::vector<std::string>& options, const std::string& where,
                                       const std::filesystem::path& base = {});

/// Appends `more` to `into`: keyed options and each folder list in order.
void append_compiler_options(CompilerOptions& into, const CompilerOptions& more);

// resolve_compiler_options (config.hpp) makes include folders absolute for
// the loaders of flags and pyproject.toml.

/// Splits an environment variable's flags at white space, as nvcc does;
/// single and double quotes group words.
std::vector<std::string> split_flags(const std::string& text);

}  // namespace ck
