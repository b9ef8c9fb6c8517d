#include "source/cpp_lexer.hpp"

#include <algorithm>
#include <utility>

namespace ck::signatures {

namespace {

bool is_identifier_start(char c)
{
    auto u = static_cast<unsigned char>(c);
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u == '$' || u >= 0x80;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_identifier_char(char c) { return is_identifier_start(c) || is_digit(c); }

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

// Phase 2: drops every backslash-newline (blanks between them tolerated, as
// GCC does) and CRLF's CR. The line of a remaining character is kept as the
// positions where the line number changes, not one number per character: a
// header of 100 kB is read on every warm build.
struct SplicedText {
    std::string text;
    std::vector<std::pair<std::size_t, int>> line_from;  ///< (first position, its line), ascending

    int line_at(std::size_t position) const
    {
        auto after = std::upper_bound(line_from.begin(), line_from.end(), position,
                                      [](std::size_t p, const auto& entry) { return p < entry.first; });
        return std::prev(after)->second;
    }
};

SplicedText splice(std::string_view source)
{
    SplicedText out;
    out.text.reserve(source.size());
    out.line_from.emplace_back(0, 1);
    int line = 1;
    auto next_line = [&] {
        ++line;
        if (out.line_from.back().first == out.text.size())
            out.line_from.back().second = line;
        else
            out.line_from.emplace_back(out.text.size(), line);
    };
    for (std::size_t i = 0; i < source.size(); ++i) {
        char c = source[i];
        if (c == '\\') {
            std::size_t j = i + 1;
            while (j < source.size() && (source[j] == ' ' || source[j] == '\t')) ++j;
            if (j < source.size() && source[j] == '\r' && j + 1 < source.size() && source[j + 1] == '\n') ++j;
            if (j < source.size() && source[j] == '\n') {
                next_line();
                i = j;
                continue;
            }
        }
        if (c == '\r' && i + 1 < source.size() && source[i + 1] == '\n') continue;
        out.text.push_back(c);
        if (c == '\n') next_line();
    }
    return out;
}

class Lexer {
public:
    Lexer(std::string_view source, LexScope scope)
        : spliced_(splice(source)), text_(spliced_.text), all_(scope == LexScope::all)
    {
    }

    std::vector<CppToken> run()
    {
        while (at_ < text_.size()) step();
        end_directive(last_line());
        return std::move(tokens_);
    }

private:
    char peek(std::size_t ahead = 0) const { return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0'; }

    int line_at(std::size_t position) const { return spliced_.line_at(position); }

    int last_line() const { return text_.empty() ? 1 : line_at(text_.size() - 1); }

    void emit(CppToken::Kind kind, std::string_view text, std::size_t start)
    {
        // A header name may follow `#include` or `__has_include (`, nothing else.
        bool has_include =
            kind == CppToken::Kind::identifier && (text == "__has_include" || text == "__has_include_next");
        header_name_next_ =
            (kind == CppToken::Kind::directive && is_include_directive(text)) || (has_include_open_ && text == "(");
        has_include_open_ = has_include;
        if (all_ || in_directive_) tokens_.push_back({kind, std::string(text), line_at(start), start == last_end_});
        last_end_ = at_;
    }

    static bool is_include_directive(std::string_view name)
    {
        return name == "include" || name == "include_next" || name == "import";
    }

    // `<...>` or `"..."` closed on the same line; false (nothing consumed) otherwise.
    bool header_name(std::size_t start)
    {
        char close = peek() == '<' ? '>' : '"';
        std::size_t end = text_.find_first_of(std::string(1, close) + "\n", at_ + 1);
        if (end == std::string::npos || text_[end] != close) return false;
        at_ = end + 1;
        emit(CppToken::Kind::header_name, std::string_view(text_).substr(start, at_ - start), start);
        return true;
    }

    void end_directive(int line)
    {
        header_name_next_ = false;
        has_include_open_ = false;
        if (!in_directive_) return;
        in_directive_ = false;
        tokens_.push_back({CppToken::Kind::directive_end, "", line, false});
    }

    void step()
    {
        char c = peek();
        if (c == '\n') {
            end_directive(line_at(at_));
            line_start_ = true;
            ++at_;
        } else if (is_blank(c)) {
            ++at_;
        } else if (c == '/' && peek(1) == '/') {
            while (at_ < text_.size() && text_[at_] != '\n') ++at_;
        } else if (c == '/' && peek(1) == '*') {
            std::size_t end = text_.find("*/", at_ + 2);
            at_ = end == std::string::npos ? text_.size() : end + 2;
        } else if (line_start_ && !in_directive_ && introduces_directive()) {
            directive();
        } else {
            line_start_ = false;
            token();
        }
    }

    // `#`, or its digraph `%:`, as the first token of a line. `??=` too: a
    // compiler that reads trigraphs (-trigraphs, strict C++14) sees `#`, one
    // that does not rejects the line, so reading it as a directive costs
    // nothing.
    std::size_t directive_marker() const
    {
        if (peek() == '#') return 1;
        if (peek() == '%' && peek(1) == ':') return 2;
        if (peek() == '?' && peek(1) == '?' && peek(2) == '=') return 3;
        return 0;
    }

    bool introduces_directive() const { return directive_marker() > 0; }

    // Between the marker and the directive's name any white space and
    // comments may stand (`#/**/include`, `# /* a\n b */ include`): phase 3
    // has made each comment one space. A `//` comment ends the line: a null
    // directive.
    void skip_directive_space()
    {
        while (at_ < text_.size()) {
            if (is_blank(text_[at_])) {
                ++at_;
            } else if (peek() == '/' && peek(1) == '*') {
                std::size_t end = text_.find("*/", at_ + 2);
                at_ = end == std::string::npos ? text_.size() : end + 2;
            } else if (peek() == '/' && peek(1) == '/') {
                while (at_ < text_.size() && text_[at_] != '\n') ++at_;
            } else {
                return;
            }
        }
    }

    void directive()
    {
        std::size_t start = at_;
        at_ += directive_marker();
        skip_directive_space();
        std::size_t name_start = at_;
        while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
        in_directive_ = true;
        line_start_ = false;
        emit(CppToken::Kind::directive, std::string_view(text_).substr(name_start, at_ - name_start), start);
    }

    void token()
    {
        char c = peek();
        std::size_t start = at_;
        if (header_name_next_ && (c == '<' || c == '"') && header_name(start)) return;
        if (is_identifier_start(c)) {
            while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
            std::string_view word = std::string_view(text_).substr(start, at_ - start);
            if (peek() == '"' && is_raw_prefix(word) && raw_string())
                return emit(CppToken::Kind::literal, "\"\"", start);
            if ((peek() == '"' || peek() == '\'') && is_literal_prefix(word)) return literal(start);
            return emit(CppToken::Kind::identifier, word, start);
        }
        if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return number(start);
        if (c == '"' || c == '\'') return literal(start);
        for (const char* punctuator : {"...", "::", "->", "##"}) {
            std::string_view p(punctuator);
            if (text_.compare(at_, p.size(), p) == 0) {
                at_ += p.size();
                return emit(CppToken::Kind::punctuator, p, start);
            }
        }
        ++at_;
        emit(CppToken::Kind::punctuator, std::string_view(text_).substr(start, 1), start);
    }

    static bool is_raw_prefix(std::string_view word)
    {
        return word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R";
    }

    static bool is_literal_prefix(std::string_view word)
    {
        return word == "L" || word == "u" || word == "U" || word == "u8";
    }

    // R"delim( ... )delim". False (nothing consumed) when the delimiter is
    // malformed: the quote is then read as an ordinary string.
    bool raw_string()
    {
        std::size_t open = at_ + 1;
        std::size_t paren = open;
        while (paren < text_.size() && paren - open <= 16 && text_[paren] != '(') {
            char d = text_[paren];
            if (d == ' ' || d == ')' || d == '\\' || d == '\n' || d == '\t' || d == '"') return false;
            ++paren;
        }
        if (paren >= text_.size() || text_[paren] != '(') return false;
        std::string close = ")" + text_.substr(open, paren - open) + "\"";
        std::size_t end = text_.find(close, paren + 1);
        at_ = end == std::string::npos ? text_.size() : end + close.size();
        return true;
    }

    void literal(std::size_t start)
    {
        char quote = peek();
        ++at_;
        while (at_ < text_.size() && text_[at_] != quote && text_[at_] != '\n') at_ += text_[at_] == '\\' ? 2 : 1;
        if (at_ < text_.size() && text_[at_] == quote) ++at_;
        if (at_ > text_.size()) at_ = text_.size();
        // A directive's string keeps its spelling: `#define H "mh.cuh"` names
        // the header an `#include H` reads.
        if (in_directive_ && quote == '"' && start + 1 < at_ && text_[start] == '"' && text_[at_ - 1] == '"')
            return emit(CppToken::Kind::literal, std::string_view(text_).substr(start, at_ - start), start);
        emit(CppToken::Kind::literal, quote == '"' ? "\"\"" : "''", start);
    }

    void number(std::size_t start)
    {
        ++at_;
        while (at_ < text_.size()) {
            char d = text_[at_];
            if ((d == 'e' || d == 'E' || d == 'p' || d == 'P') && (peek(1) == '+' || peek(1) == '-'))
                at_ += 2;
            else if (is_identifier_char(d) || d == '.')
                ++at_;
            else if (d == '\'' && is_identifier_char(peek(1)))
                at_ += 2;
            else
                break;
        }
        emit(CppToken::Kind::number, std::string_view(text_).substr(start, at_ - start), start);
    }

    SplicedText spliced_;
    const std::string& text_;
    bool all_;
    std::size_t at_ = 0;
    std::size_t last_end_ = std::string::npos;
    bool line_start_ = true;
    bool in_directive_ = false;
    bool header_name_next_ = false;
    bool has_include_open_ = false;
    std::vector<CppToken> tokens_;
};

}  // namespace

std::vector<CppToken> lex_cpp(std::string_view source, LexScope scope) { return Lexer(source, scope).run(); }

std::vector<CppToken> directive_tokens(const std::vector<CppToken>& all)
{
    std::vector<CppToken> out;
    bool inside = false;
    for (const auto& token : all) {
        if (token.kind == CppToken::Kind::directive) inside = true;
        if (inside) out.push_back(token);
        if (token.kind == CppToken::Kind::directive_end) inside = false;
    }
    return out;
}

}  // namespace ck::signatures
