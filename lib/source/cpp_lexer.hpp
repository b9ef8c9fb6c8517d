// Splits C++/CUDA source into the tokens a declaration reader needs, the way
// the translation phases 1 to 3 do: line continuations are removed, comments
// become white space, string and character literals (raw ones too) become one
// opaque token each, and preprocessor directives are marked (introduced by
// `#`, its digraph `%:` or `??=`, with any comments between it and the
// name, as the standard allows). Header names
// (`<a/b.h>`, `"c.cuh"`) are one token where phase 3 makes them one: after
// `#include` (`#include_next`, `#import`) and inside `__has_include(`. No
// input makes it fail: text it cannot classify becomes a one-character
// punctuator.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ck::signatures {

struct CppToken {
    enum class Kind {
        identifier,     ///< also keywords
        number,         ///< a pp-number: 12, 0x1f, 1'000, 1.5e-3f
        literal,        ///< a string or character literal; `text` is `""` or `''`, but an unprefixed
                        ///< string in a directive keeps its spelling (`"mh.cuh"`)
        punctuator,     ///< `::`, `...`, `->`, `##`, or one character
        directive,      ///< `#name` (`%:name`) first on a line; `text` is the name ("define", "if", ...)
        directive_end,  ///< the end of a directive's line
        header_name,    ///< `<a/b.h>` or `"c.cuh"`, delimiters kept, only where a header name may stand
    };
    Kind kind;
    std::string text;
    int line;            ///< 1-based physical line where the token starts
    bool glued = false;  ///< no white space or comment between it and the token before
};

/// Which tokens lex_cpp returns.
enum class LexScope {
    all,         ///< every token
    directives,  ///< only the directives' tokens (the text between them is still read, so that a
                 ///< comment or string cannot hide or fake one); the include scanner's cheap pass
};

/// The tokens of `source`, in order. A directive is a `directive` token, the
/// tokens of its line, then `directive_end`. With LexScope::directives the
/// result is exactly the directive tokens of the LexScope::all result, with
/// their `glued` flags.
std::vector<CppToken> lex_cpp(std::string_view source, LexScope scope = LexScope::all);

/// The directive tokens of a LexScope::all result: what lex_cpp(source,
/// LexScope::directives) returns for the same source, without lexing again.
std::vector<CppToken> directive_tokens(const std::vector<CppToken>& all);

}  // namespace ck::signatures
