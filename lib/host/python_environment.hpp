// What host builds need to know about the Python interpreter that will load
// them: the versions and platform string in cunumpy's PyccelCache key, the
// extension suffix, and where its Pyccel is. Learnt by one short Python
// process and remembered in the cache's probe records until the interpreter
// or its packages change, so a warm build starts no process.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

class ToolProbe;

/// One interpreter's facts, as the probe script prints them.
struct PythonFacts {
    std::string executable;         ///< sys.executable
    std::string version;            ///< sys.version (part of cunumpy's key)
    std::string platform;           ///< platform.platform() (part of cunumpy's key)
    std::string ext_suffix;         ///< sysconfig's EXT_SUFFIX, e.g. `.cpython-311-x86_64-linux-gnu.so`
    std::string pyccel;             ///< importlib.metadata.version("pyccel"); empty when not installed
    std::string numpy;              ///< importlib.metadata.version("numpy"); empty when not installed
    std::vector<std::string> path;  ///< sys.path: the folders whose changes invalidate the record
};

/// The script the probe runs with `python -c`: one JSON object on stdout.
extern const char* const python_facts_script;

/// Parses the probe's output. Throws ToolchainError naming `where` when it is
/// not the JSON object the script prints.
PythonFacts parse_python_facts(const std::string& json_text, const std::string& where);

/// The probe's JSON text of `facts` (what is remembered).
std::string to_json_text(const PythonFacts& facts);

/// The facts of `python` (a name in PATH or a path). Remembered in `probe`
/// per interpreter file and environment signature; with `may_start_python`
/// false only a remembered answer is used. Nothing, with `why` set, when the
/// interpreter is missing, cannot run the probe, or was never probed and may
/// not be started.
std::optional<PythonFacts> find_python_facts(const std::string& python, const ToolProbe& probe, bool may_start_python,
                                             std::string* why);

/// The `pyccel` command the interpreter's PyccelCache would run: the one
/// beside sys.executable, else the first in PATH; empty when there is none.
std::filesystem::path pyccel_command_of(const PythonFacts& facts);

}  // namespace ck
