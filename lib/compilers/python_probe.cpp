#include "compilers/python_probe.hpp"

#include "compilers/tool_probe.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/subprocess.hpp"

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr const char* find_spec_script =
    "import importlib.util, os\n"
    "spec = importlib.util.find_spec('cunumpy')\n"
    "origin = spec.origin if spec else None\n"
    "print(os.path.join(os.path.dirname(origin), 'cuda', 'include') if origin else '')\n";

std::string ask_python(const fs::path& python)
{
    try {
        auto result = util::run_process({python.string(), "-c", find_spec_script});
        if (result.exit_code != 0) return "";
        std::string dir = result.output;
        while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
        return dir;
    } catch (const ToolchainError&) {
        return "";
    }
}

// The question names the interpreter's own path: a virtual environment's
// python is a symlink to the base interpreter but sees other packages.
std::string question_for(const fs::path& interpreter)
{
    return "cunumpy-include-dir " + fs::absolute(interpreter).string();
}

}  // namespace

std::optional<fs::path> find_remembered_cunumpy_include_dir(const std::string& python, const ToolProbe& probe)
{
    fs::path interpreter = util::find_in_path(python);
    if (interpreter.empty()) return std::nullopt;
    std::error_code error;
    std::string dir = probe.answer(interpreter, question_for(interpreter), [] { return std::string(); });
    if (dir.empty() || !fs::is_directory(dir, error)) return std::nullopt;
    return fs::path(dir);
}

std::optional<fs::path> find_cunumpy_include_dir(const std::string& python, const ToolProbe& probe)
{
    fs::path interpreter = util::find_in_path(python);
    if (interpreter.empty()) return std::nullopt;
    std::error_code error;
    std::string dir = probe.answer(interpreter, question_for(interpreter), [&] { return ask_python(interpreter); });
    if (!dir.empty() && !fs::is_directory(dir, error)) dir = ask_python(interpreter);
    if (dir.empty() || !fs::is_directory(dir, error)) return std::nullopt;
    return fs::path(dir);
}

std::optional<std::string> find_cunumpy_version(const std::string& python)
{
    fs::path interpreter = util::find_in_path(python);
    if (interpreter.empty()) return std::nullopt;
    try {
        auto result = util::run_process({interpreter.string(), "-c",
                                         "import importlib.metadata as m\n"
                                         "try:\n    print(m.version('cunumpy'))\n"
                                         "except m.PackageNotFoundError:\n    pass\n"});
        std::string version = result.output;
        while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) version.pop_back();
        bool plain = !version.empty() && version.size() < 64 && version.find_first_of(" \n\t") == std::string::npos;
        if (result.exit_code != 0 || !plain) return std::nullopt;
        return version;
    } catch (const ToolchainError&) {
        return std::nullopt;
    }
}

}  // namespace ck
