#include "struct_headers/header_preprocessor.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"
#include "util/temporary_dir.hpp"
#include "util/temporary_name.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace ck {

namespace fs = std::filesystem;
using signatures::CppToken;

namespace {

bool conditional(const std::string& name)
{
    return name == "if" || name == "ifdef" || name == "ifndef" || name == "elif" || name == "else" ||
           name == "elifdef" || name == "elifndef";
}

// The word after each directive name: {name, first argument}.
std::vector<std::pair<std::string, std::string>> directive_list(const std::vector<CppToken>& directives)
{
    std::vector<std::pair<std::string, std::string>> list;
    for (std::size_t i = 0; i < directives.size(); ++i) {
        if (directives[i].kind != CppToken::Kind::directive) continue;
        bool argument = i + 1 < directives.size() && directives[i + 1].kind != CppToken::Kind::directive_end;
        list.push_back({directives[i].text, argument ? directives[i + 1].text : ""});
    }
    return list;
}

// The header's text with its `#include` lines blank, its lines where they were.
std::string without_includes(const std::string& text)
{
    std::vector<CppToken> directives = signatures::lex_cpp(text, signatures::LexScope::directives);
    std::vector<int> include_lines;
    for (std::size_t i = 0; i < directives.size(); ++i)
        if (directives[i].kind == CppToken::Kind::directive &&
            (directives[i].text == "include" || directives[i].text == "include_next" || directives[i].text == "import"))
            include_lines.push_back(directives[i].line);
    std::istringstream in(text);
    std::string out, line;
    for (int number = 1; std::getline(in, line); ++number) {
        bool include = std::find(include_lines.begin(), include_lines.end(), number) != include_lines.end();
        out += (include ? "" : line) + "\n";
    }
    return out;
}

fs::path host_preprocessor()
{
    for (const char* name : {"c++", "g++", "clang++"})
        if (auto found = util::find_in_path(name); !found.empty()) return found;
    return {};
}

// The preprocessor's output as tokens, each output line mapped back to the
// header's line through its line markers (`# <line> "<file>" flags`).
HeaderTokens mapped_tokens(const std::string& output, const fs::path& input)
{
    HeaderTokens result;
    result.preprocessed = true;
    std::istringstream in(output);
    std::string line, text;
    int next_line = 0;
    bool in_header = false;
    result.lines.push_back(0);  // tokens' lines are 1-based
    while (std::getline(in, line)) {
        std::istringstream marker(line);
        std::string hash, file;
        int number = 0;
        if (line.rfind("# ", 0) == 0 && (marker >> hash >> number >> std::quoted(file))) {
            next_line = number;
            in_header = fs::path(file) == input;
            text += "\n";
            result.lines.push_back(0);
            continue;
        }
        text += line + "\n";
        result.lines.push_back(in_header ? next_line : 0);
        ++next_line;
    }
    result.tokens = signatures::lex_cpp(text);
    return result;
}

}  // namespace

bool needs_preprocessor(const std::vector<CppToken>& directives)
{
    auto list = directive_list(directives);
    std::string guard;
    std::size_t conditionals = 0, defines = 0;
    for (const auto& [name, argument] : list) {
        conditionals += conditional(name) ? 1 : 0;
        defines += name == "define" ? 1 : 0;
    }
    // An include guard: `#ifndef G` and `#define G` first, `#endif` last, nothing else conditional.
    std::vector<std::pair<std::string, std::string>> significant;
    for (const auto& d : list)
        if (d.first != "include" && d.first != "pragma") significant.push_back(d);
    bool guarded = significant.size() >= 3 && significant[0].first == "ifndef" && significant[1].first == "define" &&
                   significant[0].second == significant[1].second && significant.back().first == "endif";
    if (guarded) return conditionals > 1 || defines > 1;
    return conditionals > 0 || defines > 0;
}

std::vector<std::string> preprocessor_defines(const Config& config)
{
    std::vector<std::string> defines = {"-D__CUDACC__"};
    defines.push_back(config.compiler == CudaCompilerKind::nvcc ? "-D__NVCC__" : "-D__CUDACC_RTC__");
    std::string arch = config.architectures.empty() ? "sm_80" : config.architectures.front();
    std::string digits;
    for (char c : arch)
        if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    if (!digits.empty()) defines.push_back("-D__CUDA_ARCH__=" + digits + "0");
    const auto& options = config.options;
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& o = options[i];
        for (const auto& [flag, spelled] : {std::pair<std::string, std::string>{"-D", "-D"},
                                            {"-U", "-U"},
                                            {"--define-macro=", "-D"},
                                            {"--undefine-macro=", "-U"},
                                            {"--define-macro", "-D"},
                                            {"--undefine-macro", "-U"}}) {
            if (o.rfind(flag, 0) != 0) continue;
            std::string value = o.substr(flag.size());
            if (value.empty() && i + 1 < options.size()) value = options[++i];
            if (!value.empty()) defines.push_back(spelled + value);
            break;
        }
    }
    return defines;
}

HeaderTokens header_tokens(const std::string& text, const fs::path& header, const Config& config)
{
    HeaderTokens plain;
    plain.tokens = signatures::lex_cpp(text);
    if (!needs_preprocessor(signatures::directive_tokens(plain.tokens))) return plain;
    const std::string cannot = header.string() +
                               ": the struct layouts cannot be decided: the header has conditional compilation or "
                               "macros, ";
    fs::path preprocessor = host_preprocessor();
    if (preprocessor.empty())
        throw SourceError(cannot +
                          "which need a C++ preprocessor to read as the kernels' compiler does, and none (c++, g++, "
                          "clang++) is in PATH; install one, or keep the header to plain structs and its guard");
    util::TemporaryDir scratch(fs::temp_directory_path() / ("cunumpy-kernels-header-" + unique_temporary_name()));
    fs::path input = scratch.path() / header.filename();
    std::ofstream(input, std::ios::binary) << without_includes(text);
    fs::path output = scratch.path() / "preprocessed.ii";
    std::vector<std::string> argv = {preprocessor.string(), "-E", "-w", "-x", "c++", "-std=c++17"};
    for (auto& define : preprocessor_defines(config)) argv.push_back(define);
    argv.insert(argv.end(), {input.string(), "-o", output.string()});
    util::ProcessResult result = util::run_process_within(argv, {}, 60);
    if (result.exit_code != 0 || result.timed_out)
        throw SourceError(cannot + "and " + preprocessor.string() + " -E failed on it (exit " +
                          std::to_string(result.exit_code) + "):\n" + result.output);
    return mapped_tokens(util::read_file(output), input);
}

}  // namespace ck
