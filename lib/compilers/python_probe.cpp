#include "compilers/python_probe.hpp"
#include "util/json_text.hpp"

#include "compilers/tool_probe.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"

#include <gnu/libc-version.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ck {

namespace fs = std::filesystem;

namespace {

// The header folder on the first line, sys.path (one folder a line) after it.
constexpr const char* find_spec_script =
    "import importlib.util, os, sys\n"
    "spec = importlib.util.find_spec('cunumpy')\n"
    "origin = spec.origin if spec else None\n"
    "print(os.path.join(os.path.dirname(origin), 'cuda', 'include') if origin else '')\n"
    "print('\\n'.join(p for p in sys.path if p))\n";

constexpr const char* path_question = "python-path 1";

struct Answer {
    std::string dir;
    std::vector<std::string> path;
};

std::optional<Answer> ask_python(const fs::path& python)
{
    try {
        auto result = util::run_process_within({python.string(), "-c", find_spec_script}, {}, python_probe_seconds);
        if (result.exit_code != 0 || result.timed_out) return std::nullopt;
        Answer answer;
        std::size_t start = 0;
        for (std::size_t end; (end = result.output.find('\n', start)) != std::string::npos; start = end + 1) {
            std::string line = result.output.substr(start, end - start);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (start == 0)
                answer.dir = line;
            else if (!line.empty())
                answer.path.push_back(line);
        }
        return answer;
    } catch (const ToolchainError&) {
        return std::nullopt;
    }
}

std::string environment_variable(const char* name)
{
    const char* value = std::getenv(name);
    return value ? value : "";
}

std::string stat_signature(const std::string& path)
{
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return "-";
    return std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec);
}

std::string path_question_for(const fs::path& interpreter)
{
    return std::string(path_question) + "\n" + fs::absolute(interpreter).string() +
           "\nPYTHONPATH=" + environment_variable("PYTHONPATH");
}

// The question names the interpreter's own path (a virtual environment's
// python is a symlink to the base interpreter but sees other packages) and
// its environment: which cunumpy find_spec finds is sys.path's to decide.
std::string question_for(const fs::path& interpreter, const std::vector<std::string>& path)
{
    return "cunumpy-include-dir 2\n" + fs::absolute(interpreter).string() + "\n" + python_environment_signature(path);
}

std::string remembered_dir(const fs::path& interpreter, const ToolProbe& probe)
{
    std::optional<std::vector<std::string>> path = remembered_sys_path(interpreter, probe);
    if (!path) return "";
    return probe.answer(interpreter, question_for(interpreter, *path), [] { return std::string(); });
}

}  // namespace

std::string python_environment_signature(const std::vector<std::string>& path)
{
    struct utsname system {};
    ::uname(&system);
    std::string signature = std::string("libc ") + gnu_get_libc_version() + "\nkernel " + system.release + " " +
                            system.machine + "\nPYTHONPATH=" + environment_variable("PYTHONPATH") + "\n";
    for (const auto& folder : path) signature += folder + " " + stat_signature(folder) + "\n";
    return sha256_hex(signature);
}

std::optional<std::vector<std::string>> remembered_sys_path(const fs::path& interpreter, const ToolProbe& probe)
{
    std::string record = probe.answer(interpreter, path_question_for(interpreter), [] { return std::string(); });
    if (record.empty()) return std::nullopt;
    try {
        return util::parse_json(record).get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

void remember_sys_path(const fs::path& interpreter, const ToolProbe& probe, const std::vector<std::string>& path)
{
    probe.remember(interpreter, path_question_for(interpreter), util::json_text(nlohmann::json(path)));
}

std::optional<fs::path> find_remembered_cunumpy_include_dir(const std::string& python, const ToolProbe& probe)
{
    fs::path interpreter = util::find_in_path(python);
    if (interpreter.empty()) return std::nullopt;
    std::error_code error;
    std::string dir = remembered_dir(interpreter, probe);
    if (dir.empty() || !fs::is_directory(dir, error)) return std::nullopt;
    return fs::path(dir);
}

std::optional<fs::path> find_cunumpy_include_dir(const std::string& python, const ToolProbe& probe)
{
    fs::path interpreter = util::find_in_path(python);
    if (interpreter.empty()) return std::nullopt;
    std::error_code error;
    std::string dir = remembered_dir(interpreter, probe);
    if (dir.empty() || !fs::is_directory(dir, error)) {
        std::optional<Answer> answer = ask_python(interpreter);
        if (!answer) return std::nullopt;
        dir = answer->dir;
        remember_sys_path(interpreter, probe, answer->path);
        if (!dir.empty()) probe.remember(interpreter, question_for(interpreter, answer->path), dir);
    }
    if (dir.empty() || !fs::is_directory(dir, error)) return std::nullopt;
    return fs::path(dir);
}

std::optional<std::string> find_cunumpy_version(const std::string& python)
{
    fs::path interpreter = util::find_in_path(python);
    if (interpreter.empty()) return std::nullopt;
    try {
        auto result = util::run_process_within({interpreter.string(), "-c",
                                                "import importlib.metadata as m\n"
                                                "try:\n    print(m.version('cunumpy'))\n"
                                                "except m.PackageNotFoundError:\n    pass\n"},
                                               {}, python_probe_seconds);
        std::string version = result.output;
        while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) version.pop_back();
        bool plain = !version.empty() && version.size() < 64 && version.find_first_of(" \n\t") == std::string::npos;
        if (result.exit_code != 0 || result.timed_out || !plain) return std::nullopt;
        return version;
    } catch (const ToolchainError&) {
        return std::nullopt;
    }
}

}  // namespace ck
