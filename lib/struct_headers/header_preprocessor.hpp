// A struct header's text as the kernels' compiler sees it: its conditional
// compilation (`#if`, `#ifdef`, `#elif`, `#else`) decided with the kernels'
// defines, its macros expanded. A header whose only conditional is its
// include guard (and `#pragma once`) and that defines no other macro is read
// as it is: no process is started. Any other is run through the host C++
// preprocessor (`c++ -E`, else g++, clang++) with the `-D` and `-U` of the
// configured compiler options and the macros the CUDA compiler predefines
// for the device pass (`__CUDACC__`, `__CUDA_ARCH__` of the first
// architecture, `__NVCC__` or `__CUDACC_RTC__`), its `#include` lines left
// out (a struct header's layouts are its own; its includes are system and
// CUDA headers a host machine may lack), keeping each line's place in the
// header from the preprocessor's line markers.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "source/cpp_lexer.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ck {

/// A header's tokens for the struct reader, and the header line of each
/// token line (`lines[n]`: the header's line of the tokens' line n; 0 for
/// lines that are not the header's).
struct HeaderTokens {
    std::vector<signatures::CppToken> tokens;
    std::vector<int> lines;  ///< empty: the tokens' lines are the header's
    bool preprocessed = false;
};

/// Whether `text` needs the preprocessor: a conditional directive other
/// than an include guard, or a macro defined other than the guard's.
bool needs_preprocessor(const std::vector<signatures::CppToken>& directives);

/// The `-D`/`-U` options of `options` (the configured compiler options) and
/// the CUDA compiler's own for the device pass of `config`, as preprocessor
/// arguments.
std::vector<std::string> preprocessor_defines(const Config& config);

/// The tokens of `text` (the header `header`) as the kernels' compiler
/// reads them. Throws SourceError naming the header when it needs the
/// preprocessor and none can be run or it fails (its message), saying that
/// the layouts cannot be decided and what to do.
HeaderTokens header_tokens(const std::string& text, const std::filesystem::path& header, const Config& config);

}  // namespace ck
