#include "compilers/include_scanner.hpp"

#include "cunumpy_kernels/cache.hpp"
#include "util/file_util.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

// Replaces comments by spaces (keeping newlines) so directives can be read
// line by line; string and character literals are kept as they are.
std::string without_comments(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        char next = i + 1 < text.size() ? text[i + 1] : '\0';
        if (c == '/' && next == '/') {
            while (i < text.size() && text[i] != '\n') ++i;
            out += '\n';
        } else if (c == '/' && next == '*') {
            for (i += 2; i < text.size() && !(text[i] == '*' && i + 1 < text.size() && text[i + 1] == '/'); ++i)
                out += text[i] == '\n' ? '\n' : ' ';
            ++i;
            out += ' ';
        } else if (c == '"' || c == '\'') {
            out += c;
            for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
                out += text[i];
                if (text[i] == '\\' && i + 1 < text.size()) out += text[++i];
            }
            if (i < text.size()) out += text[i];
        } else {
            out += c;
        }
    }
    return out;
}

std::size_t skip_blanks(const std::string& line, std::size_t at)
{
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    return at;
}

// The position after `# include` and blanks, or npos when the line is no include.
std::size_t include_operand(const std::string& line)
{
    std::size_t at = skip_blanks(line, 0);
    if (at >= line.size() || line[at] != '#') return std::string::npos;
    at = skip_blanks(line, at + 1);
    if (line.compare(at, 7, "include") != 0) return std::string::npos;
    if (at + 7 < line.size() && (std::isalnum(static_cast<unsigned char>(line[at + 7])) || line[at + 7] == '_'))
        return std::string::npos;  // #include_next and friends
    return skip_blanks(line, at + 7);
}

std::optional<std::pair<std::string, bool>> include_of_line(const std::string& line)
{
    std::size_t at = include_operand(line);
    if (at == std::string::npos) return std::nullopt;
    if (at >= line.size() || (line[at] != '"' && line[at] != '<')) return std::nullopt;
    char close = line[at] == '"' ? '"' : '>';
    std::size_t end = line.find(close, at + 1);
    if (end == std::string::npos) return std::nullopt;
    return std::make_pair(line.substr(at + 1, end - at - 1), close == '"');
}

bool is_within(const fs::path& path, const fs::path& dir)
{
    auto rel = path.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

std::vector<std::pair<int, std::string>> list_computed_includes(const std::string& source)
{
    std::vector<std::pair<int, std::string>> computed;
    std::string text = without_comments(source);
    std::size_t start = 0;
    for (int line_number = 1; start < text.size(); ++line_number) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        std::size_t at = include_operand(line);
        if (at != std::string::npos && at < line.size() && line[at] != '"' && line[at] != '<') {
            std::size_t stop = line.find_last_not_of(" \t\r");
            computed.emplace_back(line_number, line.substr(at, stop - at + 1));
        }
        start = end + 1;
    }
    return computed;
}

std::vector<std::pair<std::string, bool>> list_includes(const std::string& source)
{
    std::vector<std::pair<std::string, bool>> includes;
    std::string text = without_comments(source);
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (auto include = include_of_line(text.substr(start, end - start))) includes.push_back(*include);
        start = end + 1;
    }
    return includes;
}

IncludeScanner::IncludeScanner(std::function<std::optional<fs::path>()> late_dir) : late_dir_probe_(std::move(late_dir)) {}

const IncludeScanner::FileFacts& IncludeScanner::facts(const fs::path& path)
{
    auto it = facts_.find(path);
    if (it != facts_.end()) return it->second;
    std::string content = util::read_file(path);
    return facts_.emplace(path, FileFacts{sha256_hex(content), list_includes(content), list_computed_includes(content)})
        .first->second;
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

std::optional<fs::path> IncludeScanner::resolve(const std::string& name, bool quoted, const fs::path& including_dir,
                                                const std::vector<SearchDir>& dirs, std::string& label)
{
    std::error_code error;
    // Named relative to the search folder that holds it, so moving the tree keeps the name.
    auto label_within = [](const SearchDir& search, const fs::path& file) {
        std::string relative = file.lexically_relative(search.dir).string();
        return search.label.empty() ? relative : search.label + "/" + relative;
    };
    auto found_in = [&](const SearchDir& search) -> std::optional<fs::path> {
        fs::path candidate = (search.dir / name).lexically_normal();
        if (!fs::is_regular_file(candidate, error)) return std::nullopt;
        label = label_within(search, candidate);
        return candidate;
    };
    if (quoted) {
        fs::path beside = (including_dir / name).lexically_normal();
        if (fs::is_regular_file(beside, error)) {
            label = beside.string();
            for (const auto& search : dirs)
                if (is_within(beside, search.dir)) {
                    label = label_within(search, beside);
                    break;
                }
            if (late_dir_ && is_within(beside, *late_dir_)) label = label_within(SearchDir{*late_dir_, "<cunumpy>"}, beside);
            return beside;
        }
    }
    for (const auto& search : dirs)
        if (auto found = found_in(search)) return found;
    if (auto late = late_search_dir())
        if (auto found = found_in(*late)) return found;
    return std::nullopt;
}

IncludeScan IncludeScanner::scan(const fs::path& source_file, const std::string& source,
                                 const std::vector<SearchDir>& dirs)
{
    IncludeScan scan;
    std::map<std::string, IncludedHeader> headers;
    std::set<std::string> unresolved;
    std::set<fs::path> seen;
    std::vector<std::pair<fs::path, std::vector<std::pair<std::string, bool>>>> pending = {
        {source_file.parent_path(), list_includes(source)}};
    std::set<std::string> computed;
    for (const auto& [line, operand] : list_computed_includes(source))
        computed.insert(source_file.filename().string() + ":" + std::to_string(line) + ": #include " + operand);
    while (!pending.empty()) {
        auto [dir, includes] = std::move(pending.back());
        pending.pop_back();
        for (const auto& [name, quoted] : includes) {
            std::string label;
            auto path = resolve(name, quoted, dir, dirs, label);
            if (!path) {
                // cunumpy's headers are never system headers: a miss means cunumpy was not found.
                if (quoted || name.rfind("cunumpy/", 0) == 0) unresolved.insert(name);
                continue;
            }
            if (!seen.insert(*path).second) continue;
            const FileFacts& header = facts(*path);
            headers[label] = IncludedHeader{label, *path, header.sha256};
            for (const auto& [line, operand] : header.computed)
                computed.insert(label + ":" + std::to_string(line) + ": #include " + operand);
            pending.emplace_back(path->parent_path(), header.includes);
        }
    }
    for (auto& [label, header] : headers) scan.headers.push_back(std::move(header));
    scan.unresolved.assign(unresolved.begin(), unresolved.end());
    scan.computed.assign(computed.begin(), computed.end());
    return scan;
}

}  // namespace ck
