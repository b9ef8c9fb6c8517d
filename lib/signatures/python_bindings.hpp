// Where a Python module binds a name, statement by statement, as the module's
// namespace would hold it after import: the last binding Python executes is the
// one `getattr(module, name)` (cunumpy's from_folder) returns.
#pragma once

#include "source/python_lexer.hpp"

#include <cstddef>
#include <string_view>
#include <vector>

namespace ck::signatures {

/// One statement that binds the name.
struct PythonBinding {
    enum class Kind {
        def,         ///< `def name(...)` or `async def name(...)`
        alias,       ///< `name = other`, or `name = wrap(name)`: see `target`
        assignment,  ///< any other assignment (a call, an attribute, tuple unpacking)
        import,      ///< `import name`, `from m import name`, `... as name`
        class_def,   ///< `class name`
    };
    Kind kind = Kind::def;
    std::size_t name_token = 0;  ///< def: the function's name token; others: the statement's first token
    int line = 0;                ///< 1-based line of the statement
    int column = 0;              ///< column of the statement (0: not in any block)
    /// False inside a function or class body: such a binding is not the
    /// module's. `if`, `try`, `with`, `for` and `while` blocks at module level
    /// do bind at module level.
    bool module_level = true;
    std::string_view target;  ///< alias: the name it is assigned from (`name` itself for a wrapper)
};

/// Every binding of `name` in `tokens` (lex_python of one module), in source order.
std::vector<PythonBinding> python_bindings(const std::vector<PythonToken>& tokens, std::string_view name);

/// True when `source` (a module) binds `name` at module level in any way
/// (def, class, assignment, import): `getattr(module, name)` can then
/// succeed. False means cunumpy's from_folder raises AttributeError. Reads a
/// `def <name>(` at the start of a line without lexing.
bool python_module_binds(std::string_view source, std::string_view name);

}  // namespace ck::signatures
