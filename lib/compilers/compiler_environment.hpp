// The environment a compiler runs in, built by the tool: every child it
// starts (nvcc and the host compiler it runs, ptxas, Pyccel and the compilers
// it runs, the import check) inherits only the variables it needs to run
// (run_variables()) and those that are key inputs; everything else (NVVM_FLAGS,
// a site wrapper's own variables, ...) is gone before the compiler starts.
// A variable users set on purpose to change builds passes through a
// documented door and is keyed, or is refused naming the config key to use.
//
// nvcc (checked on CUDA 13.0 with `nvcc -dryrun` and its documentation):
//  - NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS: their values are in the key; their
//    flags are parsed like --compiler-option (include folders join the search,
//    target options are refused) and passed on the command line, and the
//    variables are removed from nvcc's environment so nothing is applied twice.
//  - NVCC_CCBIN: in the key (it picks the host compiler that preprocesses).
//  - every variable nvcc.profile extends with `+=` or `=+` (INCLUDES,
//    SYSTEM_INCLUDES, PTXAS_FLAGS, CUDAFE_FLAGS, LIBRARIES), except PATH and
//    LD_LIBRARY_PATH, and CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH,
//    OBJC_INCLUDE_PATH, which the host preprocessor reads, and
//    GCC_EXEC_PREFIX, COMPILER_PATH, which pick the programs gcc runs:
//    refused when set (`refused`), naming what to use instead.
//  - DEPENDENCIES_OUTPUT, SUNPRO_DEPENDENCIES only make gcc write a
//    dependency list, never change an artifact: removed, without a word.
// Host builds (Pyccel's gcc) refuse the same gcc variables
// (host_compiler_refused).
//  - the content of nvcc.profile: its SHA-256 is in the key.
//  - PATH, LD_LIBRARY_PATH: kept; they choose the programs and libraries
//    whose identities (`nvcc --version`, the host compiler's) are in the key.
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

/// What every child compiler inherits from the user's environment: PATH,
/// LD_LIBRARY_PATH, HOME, USER, LOGNAME, TMPDIR, TZ and the locale (LANG,
/// LANGUAGE, LC_*): what it needs to run and to word its messages.
const std::vector<std::string>& run_variables();

struct CompilerEnvironment {
    nlohmann::json keyed = nlohmann::json::object();  ///< name -> value of the set variables that are key inputs
    std::vector<std::string> prepend_flags;  ///< NVCC_PREPEND_FLAGS, split: parsed like --compiler-option, before them
    std::vector<std::string> append_flags;   ///< NVCC_APPEND_FLAGS, split: after them
    std::vector<std::string> inherited;      ///< what the compiler's process inherits: run_variables() and keyed ones
    std::vector<std::string> refused;  ///< variables set on purpose to change builds that no door takes (build refuses)
    std::string profile_sha256;        ///< of nvcc.profile, a key input; empty for NVRTC
};

/// The variables nvcc.profile extends (`NAME += ...`, `NAME =+ ...`): nvcc
/// reads their values from the environment.
std::vector<std::string> profile_extended_variables(const std::string& profile);

/// nvcc's environment, given the text of its nvcc.profile (empty when it has none).
CompilerEnvironment nvcc_environment(const std::string& profile, const EnvironmentReader& read);

/// The variables set (by `read`) that gcc compiling a host module would read
/// behind the key: CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH,
/// OBJC_INCLUDE_PATH, GCC_EXEC_PREFIX, COMPILER_PATH. Host builds refuse them.
std::vector<std::string> host_compiler_refused(const EnvironmentReader& read);

/// Why a build refuses the set variable `name` that `compiler` ("nvcc", "the
/// host compiler") would read, and what to use instead (the config key
/// `options`, -ccbin), ending "unset NAME".
std::string refused_variable_message(const std::string& name, const std::string& compiler);

/// NVRTC's environment.
CompilerEnvironment nvrtc_environment(const EnvironmentReader& read);

}  // namespace ck
