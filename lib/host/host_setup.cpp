#include "host/host_setup.hpp"

#include "host/python_environment.hpp"
#include "compilers/tool_probe.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/subprocess.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <vector>

namespace ck {

namespace fs = std::filesystem;

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// `gcc --version`'s first line, remembered per compiler file.
std::string compiler_identity(const std::string& program, const ToolProbe& probe, bool may_start_processes)
{
    fs::path tool = util::find_in_path(program);
    if (tool.empty()) return program + ": not found";
    return probe.answer(tool, "version", [&]() -> std::string {
        if (!may_start_processes) return "";
        try {
            auto result = util::run_process({tool.string(), "--version"});
            return result.exit_code == 0 ? first_line(result.output) : "";
        } catch (const ToolchainError&) {
            return "";
        }
    });
}

// Nothing when a version is not known (and may not be asked).
std::optional<std::string> compilers_of(const std::string& language, const ToolProbe& probe, bool may_start_processes)
{
    std::vector<std::string> programs = {"gcc"};
    if (language == "fortran") programs.push_back("gfortran");
    std::string identities;
    for (const auto& program : programs) {
        std::string identity = compiler_identity(program, probe, may_start_processes);
        if (identity.empty()) return std::nullopt;
        identities += (identities.empty() ? "" : "; ") + identity;
    }
    return identities;
}

void find_pyccel(HostSetup& setup, const PythonFacts& facts, const std::string& python)
{
    auto version = PyccelVersion::parse(facts.pyccel);
    fs::path command = pyccel_command_of(facts);
    if (facts.pyccel.empty() || !version || command.empty()) {
        std::string named = python == facts.executable ? "" : " (" + python + ")";
        setup.problem = "Pyccel is not installed for " + facts.executable + named +
                        ": pass --python with an interpreter that has it (scripts/setup makes .venv/bin/python; or "
                        "python3 -m venv .venv && .venv/bin/pip install pyccel==2.2.3), "
                        "or build CUDA kernels only with --only cuda";
        return;
    }
    if (std::string reason = unsupported_pyccel_reason(*version); !reason.empty()) {
        setup.problem = reason;
        return;
    }
    if (!is_checked_pyccel(*version))
        setup.warning = "Pyccel " + version->to_string() + " in " + facts.executable +
                        " is outside the checked 2.2 series; builds may fail or differ";
    setup.compiler = std::make_unique<PyccelCompiler>(command, *version, PyccelSettings::from_environment());
    setup.toolchain.pyccel = setup.compiler->identity();
    setup.toolchain.pyccel_settings = setup.compiler->settings().key_inputs();
}

}  // namespace

bool host_openmp(const Config& config, const std::string& cache_name)
{
    if (config.openmp) return *config.openmp;
    const char* value = std::getenv((env_prefix_of(cache_name) + "_OPENMP").c_str());
    if (value) {
        std::string lower = value;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        return lower != "0" && lower != "false" && lower != "no" && lower != "off";
    }
    return true;
}

HostSetup prepare_host_setup(const Config& config, const std::string& cache_name, const ToolProbe& probe,
                             bool may_start_processes)
{
    HostSetup setup;
    setup.toolchain.language = config.language;
    setup.toolchain.openmp = host_openmp(config, cache_name);
    std::string why;
    auto facts = find_python_facts(config.python, probe, may_start_processes, &why);
    if (!facts) {
        setup.problem = "cannot learn about the Python interpreter for host builds: " + why;
        return setup;
    }
    setup.toolchain.python = *facts;
    find_pyccel(setup, *facts, config.python);
    if (!setup.problem.empty()) return setup;
    auto compilers = compilers_of(config.language, probe, may_start_processes);
    if (!compilers) {
        setup.problem = "the C compiler's version is not known yet (run `cunumpy-kernels build` once)";
        return setup;
    }
    setup.toolchain.c_compiler = *compilers;
    fs::path python = util::find_in_path(config.python);
    setup.tools = HostBuildTools{setup.compiler.get(), python, facts->ext_suffix, config.language, nullptr};
    if (config.language == "c")
        setup.tools.stc = std::make_shared<StcLocator>(python, setup.compiler->settings().compiler_family);
    return setup;
}

}  // namespace ck
