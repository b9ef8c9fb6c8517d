// What cunumpy's own reader makes of a CUDA source: a model, in C++, of
// parse_cuda_signature in cunumpy 0.7.1 (_cuda_kernel.py), so that
// check-signatures can warn, without Python, that a program will fail at
// load although the declarations agree. cunumpy removes comments with two
// regular expressions that know no strings, takes the first match of
// `(template <...>)? __global__ void <name>(`, counts parentheses to the
// closing one, and reads each parameter as words: every step is modelled
// here as it behaves, quirks included. tests/e2e/test_cunumpy_readability.py
// runs cunumpy's real parser on every form this file knows.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ck::signatures {

/// The cunumpy release this model follows.
inline constexpr const char* cunumpy_reference_version = "0.7.1";

/// What cunumpy's parse_cuda_signature does with one kernel's source.
struct CunumpyReading {
    bool raises = false;             ///< it raises ValueError: the kernel cannot be loaded
    std::string why;                 ///< raises: what it fails on and how to write the declaration instead
    int line = 0;                    ///< 1-based line of the declaration it reads, or 0 when it finds none
    std::vector<std::string> names;  ///< !raises: the parameter names it reads, in order
};

/// Models `parse_cuda_signature(source, name, template_args=...)` with
/// `template_args` null (not given) or the configured arguments. Structs
/// are not known here: a parameter whose type is one unknown identifier,
/// passed by value, is taken as a struct that the program passes in
/// `structs=` (cunumpy then checks it against its definition). `hint_line`
/// is the line of the declaration this project's reader found, used only to
/// explain why cunumpy finds none. Never throws; linear in the source for
/// all but inputs built to defeat it, whose work is bounded.
CunumpyReading read_as_cunumpy(std::string_view source, std::string_view name,
                               const std::vector<std::string>* template_args, int hint_line = 0);

}  // namespace ck::signatures
