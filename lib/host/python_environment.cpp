#include "host/python_environment.hpp"
#include "util/json_text.hpp"

#include "compilers/python_probe.hpp"
#include "compilers/tool_probe.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <cctype>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

// importlib.metadata as cunumpy's _pyccel_version() reads it; nothing imported
// beyond the standard library, so the probe takes tens of milliseconds.
const char* const python_facts_script =
    "import importlib.metadata as m, json, platform, sys, sysconfig\n"
    "def version(name):\n"
    "    try:\n"
    "        return m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        return ''\n"
    "print(json.dumps({'executable': sys.executable, 'version': sys.version,\n"
    "    'platform': platform.platform(), 'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX') or '',\n"
    "    'pyccel': version('pyccel'), 'numpy': version('numpy'), 'path': [p for p in sys.path if p]}))\n";

namespace {

constexpr const char* facts_question = "python-facts 1";

std::optional<PythonFacts> ask_python(const fs::path& interpreter, std::string* why)
{
    util::ProcessResult result;
    try {
        result = util::run_process_within({interpreter.string(), "-c", python_facts_script}, {}, python_probe_seconds);
    } catch (const ToolchainError& error) {
        *why = error.what();
        return std::nullopt;
    }
    if (result.timed_out) {
        *why = interpreter.string() + " did not answer within " + std::to_string(python_probe_seconds) +
               " s (a wrapper that waits for something, or a file system that hangs?); pass an interpreter "
               "that runs `python -c 'import sys'` at once with --python";
        return std::nullopt;
    }
    if (result.exit_code != 0) {
        *why = interpreter.string() + " failed (exit " + std::to_string(result.exit_code) + "):\n" + result.output;
        return std::nullopt;
    }
    try {
        return parse_python_facts(result.output, interpreter.string());
    } catch (const ToolchainError& error) {
        *why = error.what();
        return std::nullopt;
    }
}

std::string facts_question_for(const fs::path& interpreter, const std::vector<std::string>& path)
{
    return std::string(facts_question) + "\n" + fs::absolute(interpreter).string() + "\n" +
           python_environment_signature(path);
}

}  // namespace

PythonFacts parse_python_facts(const std::string& json_text, const std::string& where)
{
    try {
        json j = util::parse_json(json_text);
        PythonFacts facts;
        facts.executable = j.at("executable").get<std::string>();
        facts.version = j.at("version").get<std::string>();
        facts.platform = j.at("platform").get<std::string>();
        facts.ext_suffix = j.at("ext_suffix").get<std::string>();
        facts.pyccel = j.at("pyccel").get<std::string>();
        facts.numpy = j.at("numpy").get<std::string>();
        facts.path = j.at("path").get<std::vector<std::string>>();
        if (facts.ext_suffix.empty()) throw ToolchainError(where + ": the interpreter reports no EXT_SUFFIX");
        return facts;
    } catch (const json::exception& error) {
        // A program that is no Python (a wrapper that runs something else,
        // /bin/true) answers nothing or text: say that, not the JSON parser's words.
        if (json_text.find_first_not_of(" \t\r\n") == std::string::npos)
            throw ToolchainError(where + ": printed nothing when asked about itself; is it a Python interpreter? " +
                                 "Name one with --python (or python in pyproject.toml)");
        std::string answer = json_text.substr(0, 200);
        while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back()))) answer.pop_back();
        throw ToolchainError(where + ": answered the Python probe with '" + answer +
                             "', not the JSON it prints; is it a Python interpreter? Name one with --python (or "
                             "python in pyproject.toml)");
    }
}

std::string to_json_text(const PythonFacts& facts)
{
    return util::json_text(json{{"executable", facts.executable},
                                {"version", facts.version},
                                {"platform", facts.platform},
                                {"ext_suffix", facts.ext_suffix},
                                {"pyccel", facts.pyccel},
                                {"numpy", facts.numpy},
                                {"path", facts.path}});
}

std::optional<PythonFacts> find_python_facts(const std::string& python, const ToolProbe& probe, bool may_start_python,
                                             std::string* why)
{
    std::string ignored;
    if (!why) why = &ignored;
    fs::path interpreter = util::find_in_path(python);
    if (interpreter.empty()) {
        *why = python.find('/') == std::string::npos ? "no Python interpreter '" + python + "' on PATH"
                                                     : "no Python interpreter at " + python;
        if (python.find('/') != std::string::npos) {
            bool present = ::access(python.c_str(), F_OK) == 0;
            if (!present && errno == EACCES)
                *why = "interpreter not accessible: " + python + ": " + util::errno_message(EACCES) +
                       " (a folder on its path may not be searched by this user)";
            else if (present)
                *why = "'" + python + "' is not an executable file: pass --python with the interpreter itself";
        }
        return std::nullopt;
    }
    if (auto path = remembered_sys_path(interpreter, probe)) {
        try {
            std::string remembered =
                probe.answer(interpreter, facts_question_for(interpreter, *path), [] { return std::string(); });
            if (!remembered.empty()) return parse_python_facts(remembered, interpreter.string());
        } catch (const std::exception&) {
            // A damaged record: ask again.
        }
    }
    if (!may_start_python) {
        *why = interpreter.string() + " has not been probed yet (run `cunumpy-kernels build` once with this --python)";
        return std::nullopt;
    }
    auto facts = ask_python(interpreter, why);
    if (!facts) return std::nullopt;
    std::string text = to_json_text(*facts);
    remember_sys_path(interpreter, probe, facts->path);
    probe.remember(interpreter, facts_question_for(interpreter, facts->path), text);
    return facts;
}

fs::path pyccel_command_of(const PythonFacts& facts)
{
    fs::path beside = fs::path(facts.executable).parent_path() / "pyccel";
    if (::access(beside.c_str(), X_OK) == 0) return beside;
    return util::find_in_path("pyccel");
}

}  // namespace ck
