// The part of the C preprocessor a declaration reader needs, without the
// include files it cannot see: object-like macros defined in the file are
// expanded (so `#define RESTRICT __restrict__` or `#define KERNEL extern "C"
// __global__` read as the compiler reads them), `#if 0` regions are dropped,
// and every other conditional is reported to the sink so that it can read
// each branch from the same starting state. Function-like macros are never
// expanded; they are listed so that a reader can say a declaration comes from
// one.
#pragma once

#include "signatures/cpp_lexer.hpp"

#include <map>
#include <string>
#include <vector>

namespace ck::signatures {

/// Receives the preprocessed tokens of a file and its conditional structure.
class TokenSink {
public:
    virtual ~TokenSink() = default;
    virtual void token(const CppToken& token) = 0;
    virtual void branch_begin() = 0;  ///< `#if`, `#ifdef`, `#ifndef` whose outcome is not known
    virtual void branch_next() = 0;   ///< `#elif`, `#else` of such a group
    virtual void branch_end() = 0;    ///< its `#endif`
};

/// A function-like macro of the file.
struct FunctionMacro {
    int line = 0;                          ///< of its `#define`
    std::vector<std::string> identifiers;  ///< of its replacement list
};

class CppPreprocessor {
public:
    /// Total expansion budget: a file whose object-like macros expand to more
    /// tokens than this many times its own is not read (an exponential macro
    /// chain must not hang a pre-commit hook).
    static constexpr std::size_t expansion_factor = 16;

    explicit CppPreprocessor(TokenSink& sink) : sink_(sink) {}

    void run(const std::vector<CppToken>& tokens);

    const std::map<std::string, FunctionMacro>& function_macros() const { return function_macros_; }
    bool expansion_limit_hit() const { return limit_hit_; }

private:
    struct ObjectMacro {
        std::vector<CppToken> body;
    };
    struct Group {
        bool parent_live;
        bool live;
        bool decided;  ///< an earlier branch was certainly taken
        bool reported; ///< branch_begin was sent
    };
    enum class Truth { no, yes, unknown };

    bool live() const { return groups_.empty() || groups_.back().live; }
    void directive(const std::string& name, const std::vector<CppToken>& body);
    void conditional(const std::string& name, const std::vector<CppToken>& body);
    void define(const std::vector<CppToken>& body);
    Truth evaluate(const std::string& name, const std::vector<CppToken>& body) const;
    void emit(const CppToken& token, int depth);
    bool hidden(const std::string& name) const;

    TokenSink& sink_;
    std::map<std::string, ObjectMacro> object_macros_;
    std::map<std::string, FunctionMacro> function_macros_;
    std::vector<Group> groups_;
    std::vector<std::string> expanding_;
    std::size_t budget_ = 0;
    bool limit_hit_ = false;
};

}  // namespace ck::signatures
