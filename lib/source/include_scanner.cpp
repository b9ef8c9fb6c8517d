#include "source/include_scanner.hpp"

#include "util/sha256.hpp"
#include "cunumpy_kernels/error.hpp"
#include "source/cpp_lexer.hpp"
#include "source/project_headers.hpp"
#include "util/file_util.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;
using signatures::CppToken;
using Kind = CppToken::Kind;

namespace {

// `path` relative to `dir` when it lies inside, as text: both are normal
// (candidates are made so, search folders too), and this runs for every miss
// of every scan, where lexically_relative's allocations showed in warm builds.
std::optional<std::string_view> inside(const std::string& path, const std::string& dir)
{
    std::string_view folder = dir;
    while (folder.size() > 1 && folder.back() == '/') folder.remove_suffix(1);
    if (path.size() <= folder.size() + 1 || path.compare(0, folder.size(), folder) != 0) return std::nullopt;
    if (folder != "/" && path[folder.size()] != '/') return std::nullopt;
    return std::string_view(path).substr(folder == "/" ? 1 : folder.size() + 1);
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

// A `#define` whose replacement can be an include operand: a string, a
// `<...>` header name, or one identifier; nothing for other macros.
std::optional<IncludeMacro> include_macro(const std::vector<CppToken>& tokens, std::size_t begin, std::size_t end)
{
    if (begin >= end || tokens[begin].kind != Kind::identifier) return std::nullopt;
    std::size_t body = begin + 1;
    if (body < end && tokens[body].text == "(" && tokens[body].glued) return std::nullopt;  // function-like
    IncludeMacro macro{tokens[begin].text, tokens[begin].line, ""};
    const CppToken* first = body < end ? &tokens[body] : nullptr;
    if (body + 1 == end && first->kind == Kind::literal && first->text.size() > 2)
        macro.operand = first->text;
    else if (body + 1 == end && first->kind == Kind::identifier)
        macro.operand = first->text;
    else if (first && first->text == "<" && tokens[end - 1].text == ">" && end - body > 2)
        macro.operand = "<" + spelled(tokens, body + 1, end - 1) + ">";
    else
        return std::nullopt;
    return macro;
}

bool has_parent_step(const std::string& name)
{
    for (const auto& part : fs::path(name))
        if (part == "..") return true;
    return false;
}

// `dir / name` as the compiler opens it. The kernel resolves `..` against the
// real folder it stands in, so `sub/../b.cuh` through a symlinked `sub` is a
// file beside the link's target, not beside the link: where the lexical and
// the physical answers differ, the physical one is the file read. Without
// `..`, the lexical path names the same file and keeps the search folders'
// spelling (and so the key's labels).
fs::path physical_candidate(const fs::path& dir, const std::string& name)
{
    fs::path lexical = (dir / name).lexically_normal();
    if (!has_parent_step(name)) return lexical;
    std::error_code error;
    fs::path folder = fs::weakly_canonical((dir / name).parent_path(), error);
    if (error) return lexical;
    fs::path physical = folder / lexical.filename();
    if (fs::weakly_canonical(lexical.parent_path(), error) == folder) return lexical;
    return physical;
}

bool is_identifier(const std::string& text)
{
    if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

FileIncludes list_includes(const std::string& source)
{
    return list_includes(signatures::lex_cpp(source, signatures::LexScope::directives));
}

FileIncludes list_includes(const std::vector<CppToken>& tokens)
{
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
        } else if ((name == "include" || name == "include_next") && body < end &&
                   tokens[body].kind == Kind::header_name) {
            const std::string& header = tokens[body].text;
            IncludeDirective include{header.substr(1, header.size() - 2), header[0] == '"', tokens[i].line, false,
                                     name == "include_next"};
            for (const auto& frame : guards)
                include.guarded = include.guarded || std::count(frame.begin(), frame.end(), include.name) > 0;
            out.includes.push_back(std::move(include));
        } else if ((name == "include" || name == "include_next") && body < end) {
            out.computed.emplace_back(tokens[i].line, spelled(tokens, body, end));
        } else if (name == "define") {
            if (auto macro = include_macro(tokens, body, end)) out.macros.push_back(std::move(*macro));
        }
        i = end;
    }
    return out;
}

// What one scan learns beyond the headers: the misses on the way.
struct IncludeScanner::Lookup {
    const IncludeSearch& search;
    std::optional<SearchDir> late;
    std::unordered_map<std::string, fs::path> absent;                 ///< by native path; labelled once, at the end
    std::vector<std::pair<std::string, const std::string*>> folders;  ///< normal form and label: dirs, then system_dirs

    explicit Lookup(const IncludeSearch& search) : search(search)
    {
        for (const auto& dir : search.dirs) folders.emplace_back(dir.dir.lexically_normal().native(), &dir.label);
        for (const auto& dir : search.system_dirs)
            folders.emplace_back(dir.dir.lexically_normal().native(), &dir.label);
    }

    // "<label>/relative" of the first search folder holding `path`; the path
    // itself outside them all (an include reaching out of every folder).
    std::string label_of(const fs::path& path) const
    {
        const std::string& text = path.native();
        auto label_in = [&](const std::string& folder, const std::string& label) -> std::optional<std::string> {
            auto relative = inside(text, folder);
            if (!relative) return std::nullopt;
            return label.empty() ? std::string(*relative) : label + "/" + std::string(*relative);
        };
        std::size_t dirs = search.dirs.size();
        for (std::size_t i = 0; i < dirs; ++i)
            if (auto label = label_in(folders[i].first, *folders[i].second)) return *label;
        if (late)
            if (auto label = label_in(late->dir.lexically_normal().native(), late->label)) return *label;
        for (std::size_t i = dirs; i < folders.size(); ++i)
            if (auto label = label_in(folders[i].first, *folders[i].second)) return *label;
        return text;
    }

    bool holds(const Candidate& candidate)
    {
        if (candidate.regular) return true;
        absent.emplace(candidate.path.native(), candidate.path);
        return false;
    }

    std::vector<std::string> absent_labels() const
    {
        std::set<std::string> labels;
        for (const auto& [native, path] : absent) labels.insert(label_of(path));
        return {labels.begin(), labels.end()};
    }
};

IncludeScanner::IncludeScanner(std::function<std::optional<fs::path>()> late_dir, util::RegularFiles* files)
    : late_dir_probe_(std::move(late_dir)), files_(files)
{
}

namespace {

constexpr const char* includes_question = "includes/2";

json to_json(const FileIncludes& file)
{
    json includes = json::array();
    for (const auto& i : file.includes) includes.push_back({i.name, i.quoted, i.line, i.guarded, i.next});
    json macros = json::array();
    for (const auto& m : file.macros) macros.push_back({m.name, m.line, m.operand});
    return {includes, file.computed, macros};
}

FileIncludes file_includes_of(const json& json)
{
    FileIncludes file;
    for (const auto& i : json.at(0))
        file.includes.push_back({i.at(0).get<std::string>(), i.at(1).get<bool>(), i.at(2).get<int>(),
                                 i.at(3).get<bool>(), i.at(4).get<bool>()});
    file.computed = json.at(1).get<std::vector<std::pair<int, std::string>>>();
    for (const auto& m : json.at(2))
        file.macros.push_back({m.at(0).get<std::string>(), m.at(1).get<int>(), m.at(2).get<std::string>()});
    return file;
}

}  // namespace

FileIncludes IncludeScanner::listed(const std::string& source) const
{
    return lexed_ ? list_includes(*lexed_->directives(source)) : list_includes(source);
}

FileIncludes IncludeScanner::includes_of(const std::string& source, std::string_view source_sha256)
{
    if (!record_) return listed(source);
    std::string digest = source_sha256.empty() ? sha256_hex(source) : std::string(source_sha256);
    return file_includes_of(record_->answer(digest, includes_question, [&] { return to_json(listed(source)); }));
}

const IncludeScanner::FileFacts& IncludeScanner::facts(const fs::path& path)
{
    auto it = facts_.find(path.native());
    if (it != facts_.end()) return it->second;
    if (record_) {
        FileFacts facts;
        auto list = [this](const std::string& content) { return to_json(listed(content)); };
        facts.includes = file_includes_of(record_->fact(path, includes_question, list, &facts.sha256));
        return facts_.emplace(path.native(), std::move(facts)).first->second;
    }
    std::string content = util::read_file(path);
    return facts_.emplace(path.native(), FileFacts{sha256_hex(content), listed(content)}).first->second;
}

const IncludeScanner::Candidate& IncludeScanner::candidate(const fs::path& dir, const std::string& name)
{
    std::string key = dir.native();
    key += '\0';
    key += name;
    auto it = candidates_.find(key);
    if (it != candidates_.end()) return it->second;
    Candidate found{physical_candidate(dir, name)};
    std::error_code error;
    found.regular = files_ ? files_->contains(found.path) : fs::is_regular_file(found.path, error);
    return candidates_.emplace(std::move(key), std::move(found)).first->second;
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

// The compiler's search, as places in order: the `-I` folders, cunumpy's
// folder (asked for only when the search reaches it), the toolkit's include
// folder, the `-isystem` folders, the toolkit's other folders.
IncludeScanner::Resolution IncludeScanner::resolve(const IncludeDirective& include, const fs::path& including_file,
                                                   std::size_t including_place, Lookup& lookup)
{
    const IncludeSearch& search = lookup.search;
    const std::size_t dirs = search.dirs.size(), late = dirs, toolkit = dirs + 1, system = dirs + 2;
    const std::size_t places =
        system + search.system_dirs.size() + (search.toolkit_dirs.size() > 1 ? search.toolkit_dirs.size() - 1 : 0);
    auto folder_of = [&](std::size_t place) -> const fs::path* {
        if (place < dirs) return &search.dirs[place].dir;
        if (place == late) {
            if (!lookup.late) lookup.late = late_search_dir();
            return lookup.late ? &lookup.late->dir : nullptr;
        }
        if (place >= system && place - system < search.system_dirs.size())
            return &search.system_dirs[place - system].dir;
        return nullptr;
    };
    auto toolkit_dir = [&](std::size_t place) -> const fs::path* {
        if (place != toolkit && place < system + search.system_dirs.size()) return nullptr;
        std::size_t i = place == toolkit ? 0 : place - system - search.system_dirs.size() + 1;
        return i < search.toolkit_dirs.size() ? &search.toolkit_dirs[i] : nullptr;
    };
    // `#include_next` goes on after the place that held the including file;
    // from the start when it was found in none (GCC treats it as #include).
    std::size_t first = include.next && including_place != Resolution::none ? including_place + 1 : 0;
    if (include.quoted && !include.next) {
        const Candidate& beside = candidate(including_file.parent_path(), include.name);
        if (lookup.holds(beside)) return Resolution{Resolution::found, beside.path};
    }
    for (std::size_t place = first; place < places; ++place) {
        if (const fs::path* dir = toolkit_dir(place)) {
            const Candidate& c = candidate(*dir, include.name);
            if (c.regular) return Resolution{Resolution::toolkit, c.path, place};
        } else if (const fs::path* folder = folder_of(place)) {
            const Candidate& c = candidate(*folder, include.name);
            if (lookup.holds(c)) return Resolution{Resolution::found, c.path, place};
        }
    }
    return Resolution{Resolution::missing, {}};
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

// What makes a missing quoted include pass. The scan follows every branch
// of every #if (it cannot know which the compiler takes), so a header named
// in a branch the compiler skips (`#if 0`, `#ifndef __CUDACC_RTC__`) is
// looked up all the same.
std::string missing_include_advice(const IncludeDirective& include)
{
    if (include.line == 0) return "";
    return " (the scan follows every #if branch, #if 0 and branches one compiler skips too, so that the key holds "
           "whatever a compiler may read: if the header is optional or in such a branch, guard the include with "
           "#if __has_include(\"" +
           include.name + "\"))";
}

// Valid C for the two ways out: the name written in the directive, or an
// object-like macro of that name the scan follows.
std::string computed_include_advice(const std::string& operand)
{
    std::string macro = is_identifier(operand) ? operand : "HEADER";
    return "write the header's name in quotes (#include \"name.cuh\"), or #define " + macro +
           " \"name.cuh\" in this file or a header it includes and #include " + macro +
           " (a -D option and a function-like macro are not followed)";
}

using MacroOperands = std::map<std::string, std::set<std::string>>;

// The header names (`"a.cuh"`, `<b.h>`) that `operand` stands for through
// `macros`, every definition followed; nothing, with `why`, when it names
// none for sure.
std::optional<std::set<std::string>> header_names(const std::string& operand, const MacroOperands& macros,
                                                  std::string& why)
{
    std::set<std::string> names, seen;
    std::vector<std::string> work = {operand};
    while (!work.empty()) {
        std::string next = work.back();
        work.pop_back();
        if (next.front() == '"' || next.front() == '<') {
            names.insert(next);
            continue;
        }
        if (!is_identifier(next)) {
            why = "'" + next + "' is no macro name (a function-like macro is not followed)";
            return std::nullopt;
        }
        auto it = macros.find(next);
        if (it == macros.end()) {
            why = next +
                  " is defined as a header name (\"name\" or <name>) in none of the files it includes or is "
                  "included by";
            return std::nullopt;
        }
        if (seen.insert(next).second) work.insert(work.end(), it->second.begin(), it->second.end());
    }
    if (names.empty()) why = operand + " expands to no header name";
    if (names.empty()) return std::nullopt;
    return names;
}

}  // namespace

IncludeScan IncludeScanner::scan(const fs::path& source_file, const std::string& source, const IncludeSearch& search,
                                 const std::vector<std::string>& pre_includes, std::string_view source_sha256)
{
    IncludeScan scan;
    Lookup lookup(search);
    std::map<std::string, IncludedHeader> headers;
    std::set<std::string> unresolved, computed;
    // Computed includes wait until the macros of every file read so far are
    // known; each definition of a name found later is followed too.
    struct ComputedInclude {
        fs::path file;
        std::size_t place;
        std::string where;  ///< "label:line"
        int line;
        std::string operand;
        std::set<std::string> followed;
    };
    std::vector<ComputedInclude> computed_includes;
    MacroOperands macros;
    auto learn = [&](const fs::path& file, std::size_t place, const std::string& label, const FileIncludes& includes) {
        for (const auto& m : includes.macros) macros[m.name].insert(m.operand);
        for (const auto& [line, operand] : includes.computed)
            computed_includes.push_back({file, place, label + ":" + std::to_string(line), line, operand, {}});
    };
    std::unordered_map<std::string, std::string> label_of_seen;  ///< native path -> key name
    FileIncludes main = includes_of(source, source_sha256);
    // Files still to read: the including file (for messages and the folder
    // quoted includes start in) and its directives.
    struct Pending {
        fs::path file;
        std::size_t place;  ///< where the search found it, for its #include_next
        const FileIncludes* includes;
    };
    std::vector<Pending> pending;

    // Follows one directive; returns the key name and the file of what it found.
    auto visit = [&](const fs::path& file, std::size_t place,
                     const IncludeDirective& include) -> std::pair<std::string, fs::path> {
        Resolution r = resolve(include, file, place, lookup);
        if (r.state == Resolution::toolkit) {
            // Keyed, not followed: two toolkits (or CCCL releases) may share
            // a compiler but not a header the kernel names.
            std::string label = "<cuda>/" + include.name;
            if (!headers.contains(label)) headers[label] = IncludedHeader{label, r.path, facts(r.path).sha256};
            return {label, include.name};
        }
        if (r.state == Resolution::missing) {
            bool cunumpy = include.name.rfind("cunumpy/", 0) == 0;
            if (cunumpy && !late_dir_) unresolved.insert(include.name);  // cunumpy was not found: warned about
            if (!include.quoted || include.guarded || (cunumpy && !late_dir_)) return {"", include.name};
            std::string where = file.string() + (include.line > 0 ? ":" + std::to_string(include.line) : "");
            throw SourceError(where + ": error: " + (include.line > 0 ? "#include \"" : "forced include \"") +
                              include.name + "\" not found" + missing_include_advice(include) + "; searched:\n" +
                              searched_folders(file.parent_path(), true, search, late_dir_) +
                              "(add the folder holding it with -I: --compiler-option or the config key options)");
        }
        auto [seen, first] = label_of_seen.try_emplace(r.path.native());
        if (!first) return {seen->second, r.path};
        std::string label = seen->second = lookup.label_of(r.path);
        const FileFacts& header = facts(r.path);
        headers[label] = IncludedHeader{label, r.path, header.sha256};
        learn(r.path, r.place, label, header.includes);
        pending.push_back({r.path, r.place, &header.includes});
        return {label, r.path};
    };

    for (const auto& name : pre_includes) {
        auto [label, file] = visit(source_file, Resolution::none, IncludeDirective{name, true, 0, false, false});
        scan.pre_includes.push_back(label);
        scan.pre_include_files.push_back(file);
    }
    learn(source_file, Resolution::none, source_file.filename().string(), main);
    pending.push_back({source_file, Resolution::none, &main});
    auto read_pending = [&] {
        while (!pending.empty()) {
            Pending next = pending.back();
            pending.pop_back();
            for (const auto& include : next.includes->includes) visit(next.file, next.place, include);
        }
    };
    read_pending();
    for (bool grew = !computed_includes.empty(); grew;) {
        grew = false;
        for (std::size_t i = 0; i < computed_includes.size(); ++i) {  // visit may add more
            std::string why;
            auto names = header_names(computed_includes[i].operand, macros, why);
            if (!names) continue;
            for (const auto& name : *names) {
                if (!computed_includes[i].followed.insert(name).second) continue;
                grew = true;
                IncludeDirective include{name.substr(1, name.size() - 2), name[0] == '"', computed_includes[i].line,
                                         false, false};
                visit(computed_includes[i].file, computed_includes[i].place, include);
            }
        }
        read_pending();
    }
    for (const auto& c : computed_includes) {
        std::string why;
        if (c.followed.empty() && !header_names(c.operand, macros, why))
            throw SourceError(c.file.string() + ":" + std::to_string(c.line) + ": error: #include " + c.operand + ": " +
                              why +
                              ", so the scan cannot tell which header the compiler reads and the cache key would lack "
                              "it; " +
                              computed_include_advice(c.operand));
        std::string names;
        for (const auto& name : c.followed) names += (names.empty() ? "" : ", ") + name;
        computed.insert(c.where + ": #include " + c.operand + " -> " + names);
    }
    for (auto& [label, header] : headers) scan.headers.push_back(std::move(header));
    scan.absent = lookup.absent_labels();
    scan.unresolved.assign(unresolved.begin(), unresolved.end());
    scan.computed.assign(computed.begin(), computed.end());
    return scan;
}

}  // namespace ck
