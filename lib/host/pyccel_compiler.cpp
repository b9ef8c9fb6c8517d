#include "host/pyccel_compiler.hpp"

#include "util/subprocess.hpp"

#include <algorithm>
#include <regex>

namespace ck {

namespace fs = std::filesystem;

std::optional<PyccelVersion> PyccelVersion::parse(const std::string& text)
{
    static const std::regex pattern(R"((?:^|[^0-9.])(\d+)\.(\d+)(?:\.(\d+))?)");
    std::smatch match;
    if (!std::regex_search(text, match, pattern)) return std::nullopt;
    PyccelVersion version;
    version.major = std::stoi(match[1]);
    version.minor = std::stoi(match[2]);
    version.patch = match[3].matched ? std::stoi(match[3]) : 0;
    return version;
}

std::string PyccelVersion::to_string() const
{
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string unsupported_pyccel_reason(const PyccelVersion& version)
{
    if (version.major < 2)
        return "Pyccel " + version.to_string() +
               " writes no stubs for imported modules; host builds need Pyccel 2.0 or later (pip install "
               "pyccel==2.2.3)";
    return "";
}

bool is_checked_pyccel(const PyccelVersion& version) { return version.major == 2 && version.minor == 2; }

PyccelSettings PyccelSettings::from_environment(const EnvironmentReader& read)
{
    PyccelSettings settings;
    auto debug = read("PYCCEL_DEBUG_MODE");
    settings.debug = debug && !debug->empty();  // Pyccel: bool(os.environ.get(...))
    if (auto family = read("PYCCEL_DEFAULT_COMPILER"); family && !family->empty()) settings.compiler_family = *family;
    if (auto home = read("PYCCEL_CONFIG_HOME"); home && !home->empty()) settings.config_home = *home;
    return settings;
}

nlohmann::json PyccelSettings::key_inputs() const
{
    nlohmann::json inputs = nlohmann::json::object();
    if (debug) inputs["mode"] = "debug";
    if (compiler_family != "GNU") inputs["compiler_family"] = compiler_family;
    if (config_home) inputs["config_home"] = *config_home;
    return inputs;
}

PyccelCompiler::PyccelCompiler(fs::path command, PyccelVersion version, PyccelSettings settings)
    : command_(std::move(command)), version_(version), settings_(std::move(settings))
{
}

std::vector<std::string> PyccelCompiler::command_line(const PyccelCompileRequest& request) const
{
    std::vector<std::string> argv = {command_.string()};
    if (version_.has_compile_command()) argv.push_back("compile");
    argv.insert(argv.end(),
                {request.source.string(), "--language", request.language, "--output", request.output.string()});
    if (request.openmp) argv.push_back("--openmp");
    // Explicit, so that no variable of Pyccel's own decides them.
    if (settings_.debug)
        argv.push_back("--debug");
    else if (version_.has_compile_command())
        argv.push_back("--no-debug");
    argv.insert(argv.end(), {"--compiler-family", settings_.compiler_family});
    return argv;
}

PyccelCompileOutput PyccelCompiler::compile(const PyccelCompileRequest& request) const
{
    util::EnvironmentOverrides environment = {{"PYTHONPATH", request.python_path}};
    if (settings_.config_home) environment.emplace_back("PYCCEL_CONFIG_HOME", *settings_.config_home);
    auto result = util::run_process(command_line(request), request.working_dir, environment, run_variables());
    return {result.exit_code == 0, result.output};
}

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to)
{
    if (from.empty()) return text;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// ` |fatal [semantic]: /x/m.py [3,15]| Undefined variable (y)`
std::string compiler_style(const std::string& line)
{
    static const std::regex diagnostic(R"(^\s*\|(\w+) \[[^\]]*\]: (.*?\.pyi?)(?: \[(\d+),(\d+)\])?\| (.*)$)");
    static const std::regex python_line(R"(line (\d+)\))");
    std::smatch match;
    if (!std::regex_match(line, match, diagnostic)) return "";
    std::string where = match[2].str();
    std::string message = match[5].str();
    std::smatch line_number;
    if (match[3].matched) {
        where += ":" + match[3].str() + ":" + match[4].str();
    } else if (std::regex_search(message, line_number, python_line)) {
        where += ":" + line_number[1].str();
    }
    return where + ": " + match[1].str() + ": " + message + "\n";
}

int open_parentheses(const std::string& line)
{
    int depth = 0;
    for (char c : line) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    return depth;
}

}  // namespace

std::string format_pyccel_log(const std::string& output,
                              const std::vector<std::pair<std::string, std::string>>& path_map,
                              const std::string& source)
{
    std::string mapped = output;
    for (const auto& [from, to] : path_map) mapped = replace_all(mapped, from, to);
    std::vector<std::string> lines;
    for (std::size_t start = 0; start < mapped.size();) {
        std::size_t end = std::min(mapped.find('\n', start), mapped.size());
        lines.push_back(mapped.substr(start, end - start));
        start = end + 1;
    }
    std::string summary;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string line = lines[i];
        // Pyccel breaks a Python syntax error's message inside its parentheses.
        if (open_parentheses(line) > 0 && i + 1 < lines.size()) line += lines[i + 1];
        summary += compiler_style(line);
    }
    if (summary.empty() && !source.empty() && mapped.find("Failed to build module") != std::string::npos)
        summary = source +
                  ": error: Pyccel translated it, but the C or Fortran compiler rejects the generated "
                  "code; try the other --language, or --no-openmp; the compiler's messages follow\n";
    return summary.empty() ? mapped : summary + "\n" + mapped;
}

}  // namespace ck
