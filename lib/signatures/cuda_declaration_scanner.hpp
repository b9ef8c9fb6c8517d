// Finds the declarations of one `__global__` function in preprocessed tokens:
// splits namespace-level code into statements (skipping function bodies and
// braced initializers, entering namespaces and `extern "C" { }` blocks), reads
// each branch of an unknown `#if` from the state before it, and keeps every
// declaration of the name with its parameter list.
#pragma once

#include "signatures/cpp_parameter_list.hpp"
#include "source/cpp_preprocessor.hpp"

#include <set>
#include <string>
#include <vector>

namespace ck::signatures {

/// One parameter of a `template <...>` header.
struct TemplateParameter {
    bool is_type = false;  ///< `typename T`, `class T`; else a value (`int N`) or a template
    std::string name;      ///< empty when unnamed
    bool has_default = false;
};

struct CudaDeclaration {
    int line = 0;              ///< of the function's name
    bool has_body = false;     ///< a definition, not a prototype
    bool is_template = false;  ///< under `template <...>`: launched only through an instantiation
    ParameterList parameters;
    std::vector<TemplateParameter> template_parameters;  ///< is_template: of the innermost header
};

/// `template __global__ void <name><args>(...);`: an explicit instantiation,
/// which makes the compiler emit that specialization.
struct ExplicitInstantiation {
    int line = 0;
    std::string arguments;  ///< the text between `<` and `>`, spelled ("double, 3")
};

/// Where the kernel's name was handed to a function-like macro at namespace level.
struct MacroUse {
    std::string macro;
    int line = 0;
};

class CudaDeclarationScanner : public TokenSink {
public:
    explicit CudaDeclarationScanner(std::string name) : name_(std::move(name)) {}

    void token(const CppToken& token) override;
    void branch_begin() override;
    void branch_next() override;
    void branch_end() override;

    /// Reads the statement the input ended in, if any.
    void finish();

    /// Every declaration found, in source order, each once.
    const std::vector<CudaDeclaration>& declarations() const { return declarations_; }
    const std::vector<MacroUse>& macro_uses() const { return macro_uses_; }
    /// Explicit instantiations of the name, in source order, each once.
    const std::vector<ExplicitInstantiation>& instantiations() const { return instantiations_; }
    /// The first line that declares the name at namespace level without
    /// `__global__` (e.g. behind a qualifier macro from another file); 0: none.
    int line_without_global() const { return line_without_global_; }

private:
    struct Entry {
        CppToken token;
        long serial;  ///< position in the token stream: tells two reads of one statement apart
    };
    using Statement = std::vector<Entry>;
    /// How a statement read differently in an earlier branch of an `#if`
    /// inside it: `tokens` then whatever follows the first `length` tokens of
    /// the statement as finally read.
    struct Alternative {
        Statement tokens;
        std::size_t length;
    };
    struct State {
        int scopes = 0;  ///< open namespace and extern "C" blocks
        int braces = 0;  ///< depth inside a function body or a statement's braces
        int parens = 0;  ///< open ( and [ of the current statement: braces inside belong to it
        bool in_function = false;
        Statement statement;
        std::vector<Alternative> alternatives;
    };

    void at_namespace_level(const CppToken& token);
    void append(const CppToken& token);
    void open_brace();
    void finish_statement(bool has_body);
    void analyze(const Statement& statement, bool has_body);
    void remember_branch();
    bool opens_scope() const;
    bool looks_like_function() const;
    void record_macro_use(const std::vector<CppToken>& tokens, const std::vector<int>& depths,
                          const Statement& statement);
    void add(CudaDeclaration declaration, long serial);
    void add_instantiation(const std::vector<CppToken>& tokens, std::size_t name, long serial);

    std::string name_;
    State state_;
    std::vector<State> saved_;
    std::vector<std::vector<Statement>> branch_ends_;  ///< per open group: the statement at the end of each branch
    long serial_ = 0;
    std::set<std::string> seen_;
    std::vector<CudaDeclaration> declarations_;
    std::vector<MacroUse> macro_uses_;
    std::vector<ExplicitInstantiation> instantiations_;
    int line_without_global_ = 0;
};

}  // namespace ck::signatures
