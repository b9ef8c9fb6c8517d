// Pyccel's command line as a child process: one module per run, with the
// workspace's paths in its diagnostics mapped back to the user's sources.
#pragma once

#include "compilers/compiler_environment.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ck {

/// A Pyccel release number, e.g. 2.2.3.
struct PyccelVersion {
    int major = 0;
    int minor = 0;
    int patch = 0;

    /// Parses `2.2.3` (as importlib.metadata reports it) or the output of
    /// `pyccel --version` (`pyccel 2.2.3 from ... (python 3.11)`); trailing
    /// pre-release tags (`2.3.0rc1`) are ignored. Nothing when no version is in it.
    static std::optional<PyccelVersion> parse(const std::string& text);

    std::string to_string() const;

    /// 2.1 and later: `pyccel compile FILE`; before: `pyccel FILE`.
    bool has_compile_command() const { return major > 2 || (major == 2 && minor >= 1); }
};

/// Why host builds cannot use `version`, or "" when they can. Before 2.0
/// Pyccel wrote no stubs for imported modules, which the module graph needs.
std::string unsupported_pyccel_reason(const PyccelVersion& version);

/// Whether `version` is one this project's tests ran against (the 2.2 series
/// pinned in requirements-dev.txt); others work as far as their command line
/// and files match, and `build` warns.
bool is_checked_pyccel(const PyccelVersion& version);

/// The settings Pyccel would otherwise read from the environment, taken from
/// it once by the tool, passed to Pyccel explicitly and keyed. Pyccel runs
/// in an environment built from run_variables() (compiler_environment.hpp):
/// nothing else of the user's reaches it or the compilers it starts.
struct PyccelSettings {
    bool debug = false;                   ///< PYCCEL_DEBUG_MODE set and not empty (as Pyccel reads it): --debug
    std::string compiler_family = "GNU";  ///< PYCCEL_DEFAULT_COMPILER: --compiler-family
    /// PYCCEL_CONFIG_HOME (Pyccel's folder of installed compilers and STC;
    /// default ~/.pyccel): passed through, its path keyed
    std::optional<std::string> config_home;

    /// Reads the three variables.
    static PyccelSettings from_environment(const EnvironmentReader& read = process_environment());

    /// The key inputs: {} for the defaults (release, GNU, no config home), so
    /// that keys made before these were keyed stay valid; else each setting.
    nlohmann::json key_inputs() const;
};

/// One `pyccel` run.
struct PyccelCompileRequest {
    std::filesystem::path source;       ///< the module to compile
    std::filesystem::path output;       ///< --output: the extension and __pyccel__/ go there
    std::filesystem::path working_dir;  ///< Pyccel's lock files land in the folder it runs in
    std::string language;               ///< "c" or "fortran"
    bool openmp = true;                 ///< --openmp
    std::string python_path;            ///< PYTHONPATH of the run (Pyccel imports dotted modules to find them)
};

struct PyccelCompileOutput {
    bool ok = false;
    std::string output;  ///< stdout and stderr, whole
};

class PyccelCompiler {
public:
    PyccelCompiler(std::filesystem::path command, PyccelVersion version, PyccelSettings settings = {});

    /// The argv of `request`.
    std::vector<std::string> command_line(const PyccelCompileRequest& request) const;

    const PyccelSettings& settings() const { return settings_; }

    /// Runs Pyccel. A module that does not compile is `ok == false` with
    /// Pyccel's output; throws ToolchainError only when Pyccel cannot start.
    PyccelCompileOutput compile(const PyccelCompileRequest& request) const;

    /// "pyccel 2.2.3": the identity in the keys.
    std::string identity() const { return "pyccel " + version_.to_string(); }

private:
    std::filesystem::path command_;
    PyccelVersion version_;
    PyccelSettings settings_;
};

/// Pyccel's output made readable where it was compiled from a copy: every
/// `from` prefix of `path_map` replaced by its `to`, and each diagnostic line
/// ` |fatal [semantic]: FILE [3,15]| message` also given first in the
/// compilers' form `FILE:3:15: fatal: message`, so that editors and CI
/// annotations find the line. When Pyccel's own checks passed but the C or
/// Fortran compiler rejected the generated code, a first line names `source`.
/// The whole output follows unchanged otherwise.
std::string format_pyccel_log(const std::string& output,
                              const std::vector<std::pair<std::string, std::string>>& path_map,
                              const std::string& source = "");

}  // namespace ck
