#include "compilers/include_scanner.hpp"

#include "cunumpy_kernels/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "signatures/cpp_lexer.hpp"
#include "util/file_util.hpp"

#include <algorithm>
#include <set>

namespace ck {

namespace fs = std::filesystem;
using signatures::CppToken;
using Kind = CppToken::Kind;

namespace {

bool is_within(const fs::path& path, const fs::path& dir)
{
    auto rel = path.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

// The operands of every `__has_include(...)` in tokens [begin, end).
std::vector<std::string> has_include_names(const std::vector<CppToken>& tokens, std::size_t begin, std::size_t end)
{
    std::vector<std::string> names;
    for (std::size_t i = begin; i + 2 < end; ++i)
        if ((tokens[i].text == "__has_include" || tokens[i].text == "__has_include_next") &&
            tokens[i + 1].text == "(" && tokens[i + 2].kind == Kind::header_name)
            names.push_back(tokens[i + 2].text.substr(1, tokens[i + 2].text.size() - 2));
    return names;
}

// The directive's operand as written, closely enough for a warning.
std::string spelled(const std::vector<CppToken>& tokens, std::size_t begin, std::size_t end)
{
    std::string text;
    for (std::size_t i = begin; i < end; ++i) text += (i > begin && !tokens[i].glued ? " " : "") + tokens[i].text;
    return text;
}

}  // namespace

FileIncludes list_includes(const std::string& source)
{
    std::vector<CppToken> tokens = signatures::lex_cpp(source);
    FileIncludes out;
    // The `__has_include` names tested by each open #if chain, innermost last.
    std::vector<std::vector<std::string>> guards;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].kind != Kind::directive) continue;
        std::size_t body = i + 1, end = body;
        while (end < tokens.size() && tokens[end].kind != Kind::directive_end) ++end;
        const std::string& name = tokens[i].text;
        if (name == "if" || name == "ifdef" || name == "ifndef") {
            guards.push_back(has_include_names(tokens, body, end));
        } else if (name == "elif" && !guards.empty()) {
            auto more = has_include_names(tokens, body, end);
            guards.back().insert(guards.back().end(), more.begin(), more.end());
        } else if (name == "endif" && !guards.empty()) {
            guards.pop_back();
        } else if (name == "include" && body < end && tokens[body].kind == Kind::header_name) {
            const std::string& header = tokens[body].text;
            IncludeDirective include{header.substr(1, header.size() - 2), header[0] == '"', tokens[i].line, false};
            for (const auto& frame : guards)
                include.guarded = include.guarded || std::count(frame.begin(), frame.end(), include.name) > 0;
            out.includes.push_back(std::move(include));
        } else if (name == "include" && body < end) {
            out.computed.emplace_back(tokens[i].line, spelled(tokens, body, end));
        }
        i = end;
    }
    return out;
}

// What one scan learns beyond the headers: the misses on the way.
struct IncludeScanner::Lookup {
    const IncludeSearch& search;
    std::optional<SearchDir> late;
    std::set<std::string> absent;

    // "<label>/relative" of the first search folder holding `path`; the path
    // itself outside them all (an include reaching out of every folder).
    std::string label_of(const fs::path& path) const
    {
        auto label_in = [&](const SearchDir& dir) {
            std::string relative = path.lexically_relative(dir.dir).string();
            return dir.label.empty() ? relative : dir.label + "/" + relative;
        };
        for (const auto& dir : search.dirs)
            if (is_within(path, dir.dir)) return label_in(dir);
        if (late && is_within(path, late->dir)) return label_in(*late);
        for (const auto& dir : search.system_dirs)
            if (is_within(path, dir.dir)) return label_in(dir);
        return path.string();
    }

    bool holds(const fs::path& candidate)
    {
        std::error_code error;
        if (fs::is_regular_file(candidate, error)) return true;
        absent.insert(label_of(candidate));
        return false;
    }
};

IncludeScanner::IncludeScanner(std::function<std::optional<fs::path>()> late_dir) : late_dir_probe_(std::move(late_dir)) {}

const IncludeScanner::FileFacts& IncludeScanner::facts(const fs::path& path)
{
    auto it = facts_.find(path);
    if (it != facts_.end()) return it->second;
    std::string content = util::read_file(path);
    return facts_.emplace(path, FileFacts{sha256_hex(content), list_includes(content)}).first->second;
}

std::optional<SearchDir> IncludeScanner::late_search_dir()
{
    if (!late_dir_asked_) {
        late_dir_asked_ = true;
        if (late_dir_probe_) late_dir_ = late_dir_probe_();
    }
    if (!late_dir_) return std::nullopt;
    return SearchDir{*late_dir_, "<cunumpy>"};
}

IncludeScanner::Resolution IncludeScanner::resolve(const IncludeDirective& include, const fs::path& including_dir,
                                                   Lookup& lookup)
{
    const IncludeSearch& search = lookup.search;
    auto found = [&](const fs::path& candidate) { return Resolution{Resolution::found, candidate, lookup.label_of(candidate)}; };
    std::error_code error;
    auto in_toolkit = [&](std::size_t i) {
        return i < search.toolkit_dirs.size() && fs::is_regular_file(search.toolkit_dirs[i] / include.name, error);
    };
    if (include.quoted) {
        fs::path beside = (including_dir / include.name).lexically_normal();
        if (lookup.holds(beside)) return found(beside);
    }
    for (const auto& dir : search.dirs) {
        fs::path candidate = (dir.dir / include.name).lexically_normal();
        if (lookup.holds(candidate)) return found(candidate);
    }
    if (!lookup.late) lookup.late = late_search_dir();
    if (lookup.late) {
        fs::path candidate = (lookup.late->dir / include.name).lexically_normal();
        if (lookup.holds(candidate)) return found(candidate);
    }
    if (in_toolkit(0)) return Resolution{Resolution::toolkit, {}, {}};
    for (const auto& dir : search.system_dirs) {
        fs::path candidate = (dir.dir / include.name).lexically_normal();
        if (lookup.holds(candidate)) return found(candidate);
    }
    for (std::size_t i = 1; i < search.toolkit_dirs.size(); ++i)
        if (in_toolkit(i)) return Resolution{Resolution::toolkit, {}, {}};
    return Resolution{Resolution::missing, {}, {}};
}

namespace {

std::string searched_folders(const fs::path& including_dir, bool quoted, const IncludeSearch& search,
                             const std::optional<fs::path>& late)
{
    std::vector<fs::path> folders;
    if (quoted) folders.push_back(including_dir);
    for (const auto& dir : search.dirs) folders.push_back(dir.dir);
    if (late) folders.push_back(*late);
    if (!search.toolkit_dirs.empty()) folders.push_back(search.toolkit_dirs.front());
    for (const auto& dir : search.system_dirs) folders.push_back(dir.dir);
    for (std::size_t i = 1; i < search.toolkit_dirs.size(); ++i) folders.push_back(search.toolkit_dirs[i]);
    std::string text;
    for (const auto& folder : folders)
        if (text.find(folder.string() + "\n") == std::string::npos) text += "  " + folder.string() + "\n";
    return text;
}

}  // namespace

IncludeScan IncludeScanner::scan(const fs::path& source_file, const std::string& source, const IncludeSearch& search,
                                 const std::vector<std::string>& pre_includes)
{
    IncludeScan scan;
    Lookup lookup{search, std::nullopt, {}};
    std::map<std::string, IncludedHeader> headers;
    std::set<std::string> unresolved, computed;
    std::set<fs::path> seen;
    FileIncludes main = list_includes(source);
    // Files still to read: the including file (for messages and the folder
    // quoted includes start in) and its directives.
    std::vector<std::pair<fs::path, const FileIncludes*>> pending;

    // Follows one directive; returns the key name and the file of what it found.
    auto visit = [&](const fs::path& file, const IncludeDirective& include) -> std::pair<std::string, fs::path> {
        Resolution r = resolve(include, file.parent_path(), lookup);
        if (r.state == Resolution::toolkit) return {"<cuda>/" + include.name, include.name};
        if (r.state == Resolution::missing) {
            bool cunumpy = include.name.rfind("cunumpy/", 0) == 0;
            if (cunumpy && !late_dir_) unresolved.insert(include.name);  // cunumpy was not found: warned about
            if (!include.quoted || include.guarded || (cunumpy && !late_dir_)) return {"", include.name};
            std::string where = file.string() + (include.line > 0 ? ":" + std::to_string(include.line) : "");
            throw SourceError(where + ": error: " + (include.line > 0 ? "#include \"" : "forced include \"") +
                              include.name + "\" not found; searched:\n" +
                              searched_folders(file.parent_path(), true, search, late_dir_) +
                              "(guard it with #if __has_include(\"" + include.name + "\") if it is optional)");
        }
        if (!seen.insert(r.path).second) return {r.label, r.path};
        const FileFacts& header = facts(r.path);
        headers[r.label] = IncludedHeader{r.label, r.path, header.sha256};
        for (const auto& [line, operand] : header.includes.computed)
            computed.insert(r.label + ":" + std::to_string(line) + ": #include " + operand);
        pending.emplace_back(r.path, &header.includes);
        return {r.label, r.path};
    };

    for (const auto& name : pre_includes) {
        auto [label, file] = visit(source_file, IncludeDirective{name, true, 0, false});
        scan.pre_includes.push_back(label);
        scan.pre_include_files.push_back(file);
    }
    for (const auto& [line, operand] : main.computed)
        computed.insert(source_file.filename().string() + ":" + std::to_string(line) + ": #include " + operand);
    pending.emplace_back(source_file, &main);
    while (!pending.empty()) {
        auto [file, includes] = pending.back();
        pending.pop_back();
        for (const auto& include : includes->includes) visit(file, include);
    }
    for (auto& [label, header] : headers) scan.headers.push_back(std::move(header));
    scan.absent.assign(lookup.absent.begin(), lookup.absent.end());
    scan.unresolved.assign(unresolved.begin(), unresolved.end());
    scan.computed.assign(computed.begin(), computed.end());
    return scan;
}

}  // namespace ck
