#include "compilers/program_file.hpp"

#include "compilers/tool_probe.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include <fstream>
#include <sstream>
#include <vector>

namespace ck {

namespace fs = std::filesystem;

namespace {

// Wrapper scripts are a few lines; a larger "script" is read this far.
constexpr std::size_t script_limit = 64 * 1024;

std::string script_text(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::string text(script_limit, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text.rfind("#!", 0) == 0 ? text : "";
}

std::vector<std::string> words(const std::string& line)
{
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string word; in >> word;) {
        if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') && word.back() == word.front())
            word = word.substr(1, word.size() - 2);
        out.push_back(word);
    }
    return out;
}

// The program an `exec` line names: its first word after exec's own options
// (`exec -a name prog`); "" when the line is no exec.
std::string exec_program(const std::string& line)
{
    std::vector<std::string> w = words(line);
    if (w.empty() || w[0] != "exec") return "";
    std::size_t i = 1;
    while (i < w.size() && w[i].front() == '-') i += w[i] == "-a" ? 2 : 1;
    return i < w.size() ? w[i] : "?";
}

std::string short_digest(const fs::path& file, const ToolProbe* probe, bool may_read)
{
    auto hash = [&]() -> std::string {
        if (!may_read) return "";
        try {
            return sha256_file(file);
        } catch (const SourceError&) {
            return "";
        }
    };
    std::string digest = probe ? probe->answer(file, "content-sha256", hash) : hash();
    return digest.substr(0, 16);
}

}  // namespace

bool is_script(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    char magic[2] = {};
    return in.read(magic, 2) && magic[0] == '#' && magic[1] == '!';
}

std::optional<fs::path> wrapper_exec_target(const fs::path& file)
{
    std::string text = is_script(file) ? script_text(file) : "";
    std::optional<fs::path> target;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::string program = exec_program(line);
        if (program.empty()) continue;
        // A variable, a PATH name or a second program: what runs is not known.
        if (program.front() != '/' || program.find('$') != std::string::npos) return std::nullopt;
        if (target && *target != program) return std::nullopt;
        target = program;
    }
    std::error_code error;
    if (!target || !fs::is_regular_file(*target, error)) return std::nullopt;
    return target;
}

std::optional<std::string> program_digest(const fs::path& file, const ToolProbe* probe, bool may_read)
{
    std::string digest = short_digest(file, probe, may_read);
    if (digest.empty()) return std::nullopt;
    std::string text = "sha256 " + digest;
    if (!is_script(file)) return text;
    auto target = wrapper_exec_target(file);
    if (!target) return text + ", a script";
    std::string target_digest = short_digest(*target, probe, may_read);
    if (target_digest.empty()) return std::nullopt;
    // The script's digest covers the path it names; the key holds no path.
    return text + ", a script running sha256 " + target_digest;
}

}  // namespace ck
