// Splits Python source into the tokens a declaration reader needs, as Python's
// tokenizer does: comments and blank lines vanish, a logical line runs on
// inside brackets and after a backslash, strings of every kind (prefixes,
// triple quotes, f-strings with nested quotes as Python 3.12 allows) are one
// token each. Any input gives tokens; nothing fails.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ck::signatures {

struct PythonToken {
    enum class Kind { name, number, string, op, newline };
    Kind kind;
    std::string_view text;    ///< name, number, op (a view into the source); empty for strings and newlines
    int line = 1;             ///< 1-based line where the token starts
    int column = 0;           ///< 0-based byte column
    bool line_start = false;  ///< first token of a logical line
};

/// The tokens of `source`; each logical line ends with a `newline` token.
/// Token texts point into `source`, which must outlive them.
std::vector<PythonToken> lex_python(std::string_view source);

}  // namespace ck::signatures
