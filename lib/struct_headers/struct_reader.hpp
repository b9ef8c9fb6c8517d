// Reads the C layout of the structs a header defines, as g++ and nvcc lay
// them out on x86-64 and the GPU (LP64: long and pointers 8 bytes): each
// member at the next offset its alignment allows, the size rounded up to the
// largest alignment. What has a clear C layout is read: scalars in every
// spelling (`unsigned long long`, `std::int64_t`), pointers (to anything,
// to pointers), arrays, several declarators in one declaration, default
// member initialisers, cv-qualifiers, `alignas` and `__align__`, enums (as
// their underlying type), `typedef struct {...} X;`, namespaces, nested
// structs and unions (named or anonymous), structs defined earlier in the
// header, and cunumpy's array views. What it cannot lay out (a template, a
// bit-field, a base class, a virtual function, a packed struct, an unknown
// type, an array bound that is not a number) is a problem naming the
// header's file and line: never a layout guessed, never a struct silently
// left out.
#pragma once

#include "runtime/parameter_layout.hpp"
#include "source/cpp_lexer.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ck {

/// A struct as read: its layout and each named member's offset.
struct ReadStruct {
    std::string name;       ///< as kernels name it (unqualified); a typedef's name too, as its own entry
    std::string qualified;  ///< with its namespaces and enclosing structs: "ns::Outer::Inner"
    std::string where;      ///< "file:line" of its definition
    StructLayout layout;
    std::vector<std::pair<std::string, std::size_t>> offsets;  ///< member name and offset, in order
};

/// A construct of the header that cannot be laid out.
struct UnreadableStruct {
    std::string where;  ///< "file:line"
    std::string what;   ///< "struct Args: member 'flags' is a bit-field"
    /// "<where>: <what>: the struct check cannot lay it out; <what to do>".
    std::string message() const;
};

struct StructReading {
    std::vector<ReadStruct> structs;  ///< in the order their definitions end
    std::vector<UnreadableStruct> problems;
};

/// The structs of a header's tokens (lex_cpp of its text, or of its
/// preprocessed text). `where` names a token's line as "file:line". Never
/// throws: what cannot be read is a problem.
StructReading read_structs(const std::vector<signatures::CppToken>& tokens,
                           const std::function<std::string(int line)>& where);

}  // namespace ck
