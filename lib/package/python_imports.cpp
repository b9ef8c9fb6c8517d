#include "package/python_imports.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace ck {

namespace fs = std::filesystem;

namespace {

struct Statement {
    std::string text;  // code with comments removed and string literals emptied
    int line = 0;
};

bool is_quote(char c)
{
    return c == '"' || c == '\'';
}

bool is_identifier_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 128;
}

// Splits source into simple statements: physical lines joined inside
// brackets and after a backslash, split at `;`. Only statements that start
// with `import` or `from` are kept (the others are scanned for their end
// only); strings in them become "".
class StatementReader {
public:
    explicit StatementReader(const std::string& source) : source_(source) {}

    std::vector<Statement> read()
    {
        while (pos_ < source_.size()) step();
        end_statement();
        return std::move(statements_);
    }

private:
    enum class State { between, kept, skipped };

    void step()
    {
        // Inside a statement that is no import only these characters matter.
        if (state_ == State::skipped) {
            pos_ = skip_to(pos_, statement_stops());
            if (pos_ == source_.size()) return;
        }
        char c = source_[pos_];
        if (c == '#') return skip_comment();
        if (state_ == State::between && !std::isspace(static_cast<unsigned char>(c))) start_statement();
        if (is_quote(c)) return skip_string();
        if (c == '\\' && pos_ + 1 < source_.size() && source_[pos_ + 1] == '\n') {
            pos_ += 2;
            ++line_;
            keep(' ');
            return;
        }
        ++pos_;
        if (c == '\n') {
            ++line_;
            if (depth_ == 0) return end_statement();
            keep(' ');
            return;
        }
        if (c == ';' && depth_ == 0) return end_statement();
        if (c == '(' || c == '[' || c == '{') ++depth_;
        if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
        if (state_ != State::between) keep(c);
    }

    using CharSet = std::array<bool, 256>;

    static CharSet char_set(std::string_view chars)
    {
        CharSet set{};
        for (char c : chars) set[static_cast<unsigned char>(c)] = true;
        return set;
    }

    static const CharSet& statement_stops()
    {
        static const CharSet set = char_set("\n#'\"\\;([{)]}");
        return set;
    }

    template <char Quote>
    static const CharSet& string_stops()
    {
        static const CharSet set = char_set(std::string{'\\', '\n', Quote});
        return set;
    }

    // The first position from `from` holding a character of `stops`, or the end.
    std::size_t skip_to(std::size_t from, const CharSet& stops) const
    {
        const std::size_t size = source_.size();
        while (from < size && !stops[static_cast<unsigned char>(source_[from])]) ++from;
        return from;
    }

    void start_statement()
    {
        start_line_ = line_;
        auto keyword_at = [&](const char* keyword, std::size_t length) {
            return source_.compare(pos_, length, keyword) == 0 &&
                   (pos_ + length >= source_.size() || !is_identifier_char(source_[pos_ + length]));
        };
        state_ = keyword_at("import", 6) || keyword_at("from", 4) ? State::kept : State::skipped;
    }

    void keep(char c)
    {
        if (state_ == State::kept) current_ += c;
    }

    void skip_comment()
    {
        while (pos_ < source_.size() && source_[pos_] != '\n') ++pos_;
    }

    void skip_string()
    {
        char quote = source_[pos_];
        bool triple = source_.compare(pos_, 3, std::string(3, quote)) == 0;
        pos_ += triple ? 3 : 1;
        const CharSet& stops = quote == '"' ? string_stops<'"'>() : string_stops<'\''>();
        while (pos_ < source_.size()) {
            pos_ = skip_to(pos_, stops);
            if (pos_ == source_.size()) break;
            char c = source_[pos_];
            if (c == '\\') {
                if (pos_ + 1 < source_.size() && source_[pos_ + 1] == '\n') ++line_;
                pos_ += 2;
                continue;
            }
            if (c == '\n') {
                if (!triple) break;  // an unterminated string: the line ends it
                ++line_;
            }
            if (c == quote && (!triple || source_.compare(pos_, 3, std::string(3, quote)) == 0)) {
                pos_ += triple ? 3 : 1;
                break;
            }
            ++pos_;
        }
        keep('"');
        keep('"');
    }

    void end_statement()
    {
        if (state_ == State::kept) statements_.push_back({current_, start_line_});
        current_.clear();
        state_ = State::between;
    }

    const std::string& source_;
    std::size_t pos_ = 0;
    int line_ = 1;
    int start_line_ = 1;
    int depth_ = 0;
    State state_ = State::between;
    std::string current_;
    std::vector<Statement> statements_;
};

std::vector<std::string> words_of(const std::string& text)
{
    std::vector<std::string> words;
    std::string word;
    auto flush = [&] {
        if (!word.empty()) words.push_back(word);
        word.clear();
    };
    for (char c : text) {
        if (c == ',' || c == '(' || c == ')') {
            flush();
            words.emplace_back(1, c);
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            flush();
        } else {
            word += c;
        }
    }
    flush();
    return words;
}

bool is_module_name(const std::string& name, bool allow_dots_first)
{
    if (name.empty()) return false;
    std::size_t start = 0;
    if (allow_dots_first)
        while (start < name.size() && name[start] == '.') ++start;
    if (start == name.size()) return start > 0;
    bool after_dot = true;
    for (std::size_t i = start; i < name.size(); ++i) {
        char c = name[i];
        if (c == '.') {
            if (after_dot) return false;
            after_dot = true;
        } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 128) {
            if (after_dot && std::isdigit(static_cast<unsigned char>(c))) return false;
            after_dot = false;
        } else {
            return false;
        }
    }
    return !after_dot;
}

// `import a.b as x, c` -> a.b, c
void read_import(const std::vector<std::string>& words, int line, std::vector<PythonImport>& imports)
{
    bool expect_name = true;
    for (std::size_t i = 1; i < words.size(); ++i) {
        if (words[i] == ",") {
            expect_name = true;
        } else if (expect_name && is_module_name(words[i], false)) {
            imports.push_back({words[i], line});
            expect_name = false;
        }
    }
}

// `from a.b import x` -> a.b
void read_from(const std::vector<std::string>& words, int line, std::vector<PythonImport>& imports)
{
    if (words.size() >= 4 && words[2] == "import" && is_module_name(words[1], true)) imports.push_back({words[1], line});
}

// `<base>/a/b/c.py` for `a.b.c`. The scanner admits only dotted identifiers,
// so the file stays below `base`.
fs::path module_file(const fs::path& base, const std::string& dotted)
{
    std::string relative = dotted;
    std::replace(relative.begin(), relative.end(), '.', '/');
    return base / (relative + ".py");
}

bool is_python_file(const fs::path& file)
{
    std::error_code error;
    return fs::is_regular_file(file, error);
}

bool is_inside(const fs::path& file, const fs::path& root)
{
    auto relative = file.lexically_normal().lexically_relative(root.lexically_normal());
    return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

std::vector<PythonImport> scan_python_imports(const std::string& source)
{
    std::vector<PythonImport> imports;
    for (const auto& statement : StatementReader(source).read()) {
        auto words = words_of(statement.text);
        if (words.size() < 2) continue;
        if (words[0] == "import") read_import(words, statement.line, imports);
        if (words[0] == "from") read_from(words, statement.line, imports);
    }
    return imports;
}

std::optional<fs::path> resolve_python_import(const std::string& module, const fs::path& importer,
                                              const fs::path& source_root)
{
    std::vector<fs::path> candidates;
    fs::path folder = importer.parent_path();
    if (!module.empty() && module[0] == '.') {
        std::size_t depth = module.find_first_not_of('.');
        if (depth == std::string::npos) return std::nullopt;  // `from . import x`: a package, not a module
        for (std::size_t up = 1; up < depth; ++up) folder = folder.parent_path();
        if (!is_inside(folder / "x", source_root)) return std::nullopt;
        candidates.push_back(module_file(folder, module.substr(depth)));
    } else {
        candidates.push_back(module_file(folder, module));
        candidates.push_back(module_file(source_root, module));
    }
    for (const auto& candidate : candidates)
        if (is_python_file(candidate)) return candidate.lexically_normal();
    return std::nullopt;
}

std::string python_module_name(const fs::path& file, const fs::path& source_root)
{
    fs::path relative = file.lexically_normal().lexically_relative(source_root.lexically_normal());
    relative.replace_extension();
    std::string name;
    for (const auto& part : relative) name += (name.empty() ? "" : ".") + part.string();
    return name;
}

}  // namespace ck
