// The part of the C preprocessor a declaration reader needs: object-like
// macros defined in the file, or in the project headers it includes (when an
// IncludeSource is given), are expanded (so `#define RESTRICT __restrict__`
// or `#define KERNEL extern "C" __global__` read as the compiler reads them);
// of a header only its directives count, its declarations are not the
// file's. `#if 0` regions are dropped,
// and every other conditional is reported to the sink so that it can read
// each branch from the same starting state. Function-like macros are never
// expanded; they are listed so that a reader can say a declaration comes from
// one.
#pragma once

#include "source/cpp_lexer.hpp"
#include "source/project_headers.hpp"

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
    std::string file;                      ///< the header's name, empty for the file itself
};

class CppPreprocessor {
public:
    /// Total expansion budget: a file whose object-like macros expand to more
    /// tokens than this many times its own is not read (an exponential macro
    /// chain must not hang a pre-commit hook).
    static constexpr std::size_t expansion_factor = 16;

    /// Includes nested deeper than this are not followed.
    static constexpr std::size_t max_include_depth = 16;

    /// `includes`: where `#include` finds project headers; null: none followed.
    explicit CppPreprocessor(TokenSink& sink, IncludeSource* includes = nullptr) : sink_(sink), includes_(includes) {}

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
        bool decided;   ///< an earlier branch was certainly taken
        bool reported;  ///< branch_begin was sent
    };
    enum class Truth { no, yes, unknown };

    bool live() const { return groups_.empty() || groups_.back().live; }
    void directive(const std::string& name, const std::vector<CppToken>& body);
    void conditional(const std::string& name, const std::vector<CppToken>& body);
    void define(const std::vector<CppToken>& body);
    void include(const std::vector<CppToken>& written);
    void run_tokens(const std::vector<CppToken>& tokens);
    bool in_header() const { return !include_stack_.empty(); }
    Truth evaluate(const std::string& name, const std::vector<CppToken>& body) const;
    void emit(const CppToken& token, int depth);
    bool hidden(const std::string& name) const;

    TokenSink& sink_;
    IncludeSource* includes_;
    std::vector<std::filesystem::path> include_stack_;  ///< the headers being read, outermost first
    std::vector<std::size_t> include_groups_;           ///< per header: the groups open when it began
    std::map<std::string, ObjectMacro> object_macros_;
    std::map<std::string, FunctionMacro> function_macros_;
    std::vector<Group> groups_;
    std::vector<std::string> expanding_;
    std::size_t budget_ = 0;
    bool limit_hit_ = false;
};

}  // namespace ck::signatures
