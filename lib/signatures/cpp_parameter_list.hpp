// Reading the parameter names of a C++ function declaration: from the `(` of
// the declarator to its `)`, through everything a real CUDA kernel puts in
// between (qualifiers, templates, attributes, arrays, references, function
// pointers, default arguments). A parameter whose name cannot be told for
// sure is reported, never guessed.
#pragma once

#include "source/cpp_lexer.hpp"

#include <string>
#include <vector>

namespace ck::signatures {

struct ParameterList {
    bool ok = false;
    std::vector<std::string> names;  ///< ok: in order; empty for `()` and `(void)`
    /// ok: each parameter's declaration as the compiler reads it, without its
    /// name, attributes and default value (`const double * __restrict__`,
    /// `double [ 3 ]`): what the runtime types arguments by.
    std::vector<std::vector<CppToken>> types;
    std::string problem;        ///< not ok: why, naming the parameter
    bool unnamed_only = false;  ///< not ok only because parameters have no names (a prototype)
    std::size_t close = 0;      ///< index of the closing `)`, when found
};

/// Reads the list whose `(` is `tokens[open]`.
ParameterList read_parameter_list(const std::vector<CppToken>& tokens, std::size_t open);

/// Tokens joined as a reader would write them, for messages.
std::string spell(const std::vector<CppToken>& tokens, std::size_t begin, std::size_t end);

}  // namespace ck::signatures
