#include "source/python_lexer.hpp"

namespace ck::signatures {

namespace {

bool is_name_start(char c)
{
    auto u = static_cast<unsigned char>(c);
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// r, b, u, f, t and their two-letter combinations, in any case.
bool is_string_prefix(std::string_view word, bool& raw, bool& formatted)
{
    if (word.empty() || word.size() > 2) return false;
    raw = formatted = false;
    for (char c : word) {
        char lower = static_cast<char>(c | 0x20);
        if (lower == 'r')
            raw = true;
        else if (lower == 'f' || lower == 't')
            formatted = true;
        else if (lower != 'b' && lower != 'u')
            return false;
    }
    return true;
}

// Deeper f-string nesting is read as plain text: Python itself stops far earlier.
constexpr int max_nesting = 16;

class Lexer {
public:
    explicit Lexer(std::string_view source) : s_(source) {}

    std::vector<PythonToken> run()
    {
        while (at_ < s_.size()) step();
        end_line();
        return std::move(tokens_);
    }

private:
    char peek(std::size_t ahead = 0) const { return at_ + ahead < s_.size() ? s_[at_ + ahead] : '\0'; }

    void newline_at(std::size_t position)
    {
        ++line_;
        line_begin_ = position + 1;
    }

    void end_line()
    {
        if (!tokens_.empty() && tokens_.back().kind != PythonToken::Kind::newline)
            tokens_.push_back({PythonToken::Kind::newline, "", line_, 0, false});
        logical_start_ = true;
    }

    void step()
    {
        char c = peek();
        if (c == '\n') {
            newline_at(at_++);
            if (depth_ == 0) end_line();
        } else if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
            ++at_;
        } else if (c == '\\' && (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n'))) {
            at_ += peek(1) == '\n' ? 1 : 2;
            newline_at(at_++);
        } else if (c == '#') {
            while (at_ < s_.size() && s_[at_] != '\n') ++at_;
        } else {
            token();
        }
    }

    // `token_line_begin_` is where the token's own line began: a string may
    // end lines later, after line_begin_ moved on.
    void emit(PythonToken::Kind kind, std::string_view text, int line, std::size_t start)
    {
        int column = static_cast<int>(start - token_line_begin_);
        tokens_.push_back({kind, text, line, column, logical_start_});
        logical_start_ = false;
    }

    void token()
    {
        std::size_t start = at_;
        int line = line_;
        token_line_begin_ = line_begin_;
        char c = peek();
        if (is_name_start(c)) {
            while (at_ < s_.size() && is_name_char(s_[at_])) ++at_;
            std::string_view word = s_.substr(start, at_ - start);
            bool raw = false, formatted = false;
            if ((peek() == '"' || peek() == '\'') && is_string_prefix(word, raw, formatted)) {
                at_ = string_end(at_, raw, formatted, 0);
                return emit(PythonToken::Kind::string, "", line, start);
            }
            return emit(PythonToken::Kind::name, word, line, start);
        }
        if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
            while (at_ < s_.size() && (is_name_char(s_[at_]) || s_[at_] == '.' ||
                                       ((s_[at_] == '+' || s_[at_] == '-') && (s_[at_ - 1] | 0x20) == 'e')))
                ++at_;
            return emit(PythonToken::Kind::number, s_.substr(start, at_ - start), line, start);
        }
        if (c == '"' || c == '\'') {
            at_ = string_end(at_, false, false, 0);
            return emit(PythonToken::Kind::string, "", line, start);
        }
        operator_token(start, line);
    }

    void operator_token(std::size_t start, int line)
    {
        for (const char* op : {"...", "**", "->", ":=", "//", "==", "!=", "<=", ">=", "<<", ">>"}) {
            std::string_view text(op);
            if (s_.compare(at_, text.size(), text) == 0) {
                at_ += text.size();
                return emit(PythonToken::Kind::op, s_.substr(start, text.size()), line, start);
            }
        }
        char c = s_[at_++];
        if (c == '(' || c == '[' || c == '{') ++depth_;
        if ((c == ')' || c == ']' || c == '}') && depth_ > 0) --depth_;
        emit(PythonToken::Kind::op, s_.substr(start, 1), line, start);
    }

    // The position after the string whose opening quote is at `i`.
    std::size_t string_end(std::size_t i, bool raw, bool formatted, int nesting)
    {
        char quote = s_[i];
        bool triple = i + 2 < s_.size() && s_[i + 1] == quote && s_[i + 2] == quote;
        i += triple ? 3 : 1;
        while (i < s_.size()) {
            char c = s_[i];
            if (c == '\\') {
                if (i + 1 < s_.size() && s_[i + 1] == '\n') newline_at(i + 1);
                i += 2;
                continue;
            }
            if (c == '\n') {
                if (!triple) return i;  // unterminated: Python stops here too
                newline_at(i);
            }
            if (c == quote && (!triple || (i + 2 < s_.size() && s_[i + 1] == quote && s_[i + 2] == quote)))
                return i + (triple ? 3 : 1);
            if (formatted && nesting < max_nesting && c == '{') {
                if (i + 1 < s_.size() && s_[i + 1] == '{') {
                    i += 2;
                    continue;
                }
                i = replacement_field_end(i + 1, nesting + 1);
                continue;
            }
            ++i;
        }
        (void)raw;  // a raw string still cannot end at an escaped quote
        return s_.size();
    }

    // After the `{` of an f-string: an expression, then `!r` and `:spec`, to `}`.
    std::size_t replacement_field_end(std::size_t i, int nesting)
    {
        int depth = 0;
        while (i < s_.size()) {
            char c = s_[i];
            if (c == '(' || c == '[' || c == '{')
                ++depth;
            else if ((c == ')' || c == ']') && depth > 0)
                --depth;
            else if (c == '}') {
                if (depth == 0) return i + 1;
                --depth;
            } else if (c == '"' || c == '\'') {
                bool raw = false, formatted = false;
                std::size_t word = i;
                while (word > 0 && is_name_char(s_[word - 1])) --word;
                is_string_prefix(s_.substr(word, i - word), raw, formatted);
                i = string_end(i, raw, formatted, nesting);
                continue;
            } else if (c == ':' && depth == 0 && (i + 1 >= s_.size() || s_[i + 1] != '=')) {
                return format_spec_end(i + 1, nesting);
            } else if (c == '#') {
                while (i < s_.size() && s_[i] != '\n') ++i;
                continue;
            } else if (c == '\n') {
                newline_at(i);
            }
            ++i;
        }
        return i;
    }

    std::size_t format_spec_end(std::size_t i, int nesting)
    {
        while (i < s_.size()) {
            char c = s_[i];
            if (c == '}') return i + 1;
            if (c == '{' && nesting < max_nesting) {
                i = replacement_field_end(i + 1, nesting + 1);
                continue;
            }
            if (c == '\n') newline_at(i);
            ++i;
        }
        return i;
    }

    std::string_view s_;
    std::size_t at_ = 0;
    int line_ = 1;
    std::size_t line_begin_ = 0;
    std::size_t token_line_begin_ = 0;
    int depth_ = 0;
    bool logical_start_ = true;
    std::vector<PythonToken> tokens_;
};

}  // namespace

std::vector<PythonToken> lex_python(std::string_view source) { return Lexer(source).run(); }

}  // namespace ck::signatures
