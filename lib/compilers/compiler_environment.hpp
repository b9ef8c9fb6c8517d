// The environment variables a CUDA compiler reads, and what the cache does
// with each: a variable that can change an artifact is either part of the key
// or removed from the compiler's environment, never left to chance.
//
// nvcc (checked on CUDA 13.0 with `nvcc -dryrun` and its documentation):
//  - NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS: their values are in the key; their
//    flags are parsed like --compiler-option (include folders join the search,
//    target options are refused) and passed on the command line, and the
//    variables are removed from nvcc's environment so nothing is applied twice.
//  - NVCC_CCBIN: in the key (it picks the host compiler that preprocesses).
//  - every variable nvcc.profile extends with `+=` or `=+` (INCLUDES,
//    SYSTEM_INCLUDES, PTXAS_FLAGS, CUDAFE_FLAGS, LIBRARIES), except PATH and
//    LD_LIBRARY_PATH: removed (nvcc would append them to its own flags).
//  - CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH, OBJC_INCLUDE_PATH and gcc's
//    GCC_EXEC_PREFIX, COMPILER_PATH, DEPENDENCIES_OUTPUT, SUNPRO_DEPENDENCIES,
//    which the host preprocessor reads: removed (use -I).
//  - the content of nvcc.profile: its SHA-256 is in the key.
//  - TMPDIR, PATH, LANG: left alone (scratch files, finding tools, messages).
// NVRTC runs in-process and gets its include folders as options only; of the
// variables libnvrtc 13 reads (a getenv trace) only NVRTC_APPEND_FLAGS is
// documented-looking user input, so its value is in the key when set.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// Reads one environment variable; a seam so tests use a fake environment.
using EnvironmentReader = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment (std::getenv).
EnvironmentReader process_environment();

struct CompilerEnvironment {
    nlohmann::json keyed = nlohmann::json::object();  ///< name -> value of the set variables that are key inputs
    std::vector<std::string> prepend_flags;  ///< NVCC_PREPEND_FLAGS, split: parsed like --compiler-option, before them
    std::vector<std::string> append_flags;   ///< NVCC_APPEND_FLAGS, split: after them
    std::vector<std::string> removed;        ///< variables removed from the compiler's environment
    std::vector<std::string> ignored;        ///< of those, the ones that were set and change nothing now (warned about)
    std::string profile_sha256;              ///< of nvcc.profile, a key input; empty for NVRTC
};

/// The variables nvcc.profile extends (`NAME += ...`, `NAME =+ ...`): nvcc
/// reads their values from the environment.
std::vector<std::string> profile_extended_variables(const std::string& profile);

/// nvcc's environment, given the text of its nvcc.profile (empty when it has none).
CompilerEnvironment nvcc_environment(const std::string& profile, const EnvironmentReader& read);

/// NVRTC's environment.
CompilerEnvironment nvrtc_environment(const EnvironmentReader& read);

}  // namespace ck
