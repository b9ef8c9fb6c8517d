#include "compilers/compiler_environment.hpp"

#include "compilers/compiler_options.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace ck {

namespace {

// Read by gcc, which nvcc runs to preprocess device code too: include
// folders that would escape the key.
const std::vector<std::string> host_include_variables = {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
                                                         "OBJC_INCLUDE_PATH"};

// Read by gcc to find the programs it runs (cc1plus, as): another
// preprocessor or compiler behind the key's identity of the host compiler.
const std::vector<std::string> host_program_variables = {"GCC_EXEC_PREFIX", "COMPILER_PATH"};

bool is_host_include_variable(const std::string& name)
{
    return std::find(host_include_variables.begin(), host_include_variables.end(), name) !=
           host_include_variables.end();
}

bool is_host_program_variable(const std::string& name)
{
    return std::find(host_program_variables.begin(), host_program_variables.end(), name) !=
           host_program_variables.end();
}

// nvcc.profile extends these too, but nvcc needs them to find its own tools.
bool needed_by_nvcc(const std::string& name) { return name == "PATH" || name == "LD_LIBRARY_PATH"; }

void add_unique(std::vector<std::string>& names, const std::string& name)
{
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

}  // namespace

const std::vector<std::string>& run_variables()
{
    static const std::vector<std::string> names = {"PATH", "LD_LIBRARY_PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ",
                                                   "LANG", "LANGUAGE",        "LC_*"};
    return names;
}

EnvironmentReader process_environment()
{
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        return value ? std::optional<std::string>(value) : std::nullopt;
    };
}

std::vector<std::string> profile_extended_variables(const std::string& profile)
{
    std::vector<std::string> names;
    std::istringstream lines(profile);
    for (std::string line; std::getline(lines, line);) {
        std::size_t op = line.find_first_of("+=");
        if (op == std::string::npos) continue;
        bool extends = line.compare(op, 2, "+=") == 0 || line.compare(op, 2, "=+") == 0;
        std::string name = line.substr(0, op);
        name.erase(name.find_last_not_of(" \t") + 1);
        name.erase(0, name.find_first_not_of(" \t"));
        if (extends && !name.empty() && name.find_first_of(" \t$()") == std::string::npos) add_unique(names, name);
    }
    return names;
}

CompilerEnvironment nvcc_environment(const std::string& profile, const EnvironmentReader& read)
{
    CompilerEnvironment env;
    env.profile_sha256 = sha256_hex(profile);
    for (const char* name : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"})
        if (auto value = read(name)) env.keyed[name] = *value;
    if (auto flags = read("NVCC_PREPEND_FLAGS")) env.prepend_flags = split_flags(*flags);
    if (auto flags = read("NVCC_APPEND_FLAGS")) env.append_flags = split_flags(*flags);
    // The flag variables reach nvcc on its command line, parsed; NVCC_CCBIN as itself.
    env.inherited = run_variables();
    env.inherited.push_back("NVCC_CCBIN");
    std::vector<std::string> intended = host_include_variables;
    intended.insert(intended.end(), host_program_variables.begin(), host_program_variables.end());
    // The variables every toolkit's nvcc.profile extends, refused too when the
    // profile beside the nvcc in PATH is not the one that runs (a site's
    // wrapper script), or is missing.
    for (const char* name : {"INCLUDES", "SYSTEM_INCLUDES", "LIBRARIES", "CUDAFE_FLAGS", "PTXAS_FLAGS"})
        add_unique(intended, name);
    for (const auto& name : profile_extended_variables(profile))
        if (!needed_by_nvcc(name)) add_unique(intended, name);
    for (const auto& name : intended)
        if (read(name)) env.refused.push_back(name);
    return env;
}

std::vector<std::string> host_compiler_refused(const EnvironmentReader& read)
{
    std::vector<std::string> set;
    for (const auto* names : {&host_include_variables, &host_program_variables})
        for (const auto& name : *names)
            if (read(name)) set.push_back(name);
    return set;
}

std::string refused_variable_message(const std::string& name, const std::string& compiler)
{
    std::string head =
        name + " is set: " + compiler + " would read it behind the cache key's back, so builds refuse it; ";
    if (is_host_program_variable(name))
        return head +
               "it picks the programs gcc runs: choose the host compiler itself (nvcc's -ccbin, Pyccel's "
               "compiler family; their identities are keyed), and unset " +
               name;
    if (is_host_include_variable(name))
        return head +
               "pass its folders as -isystem DIR or -I DIR in the config key `options` ([tool.cunumpy-kernels] "
               "in pyproject.toml) or as --compiler-option, and unset " +
               name;
    return head +
           "pass its include folders or flags in the config key `options` ([tool.cunumpy-kernels] in "
           "pyproject.toml) or as --compiler-option (-isystem DIR, -I DIR, -Xptxas ...), and unset " +
           name;
}

CompilerEnvironment nvrtc_environment(const EnvironmentReader& read)
{
    CompilerEnvironment env;
    env.inherited = run_variables();  // for ptxas, when NVRTC's PTX goes through it
    if (auto value = read("NVRTC_APPEND_FLAGS")) env.keyed["NVRTC_APPEND_FLAGS"] = *value;
    return env;
}

}  // namespace ck
