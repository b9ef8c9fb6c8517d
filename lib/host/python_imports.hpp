// Which modules a Python source imports, read without running Python, and
// where Pyccel finds each one. The import graph of Pyccel host kernels is
// built from these: an imported module is compiled first and its content is
// part of its importers' keys.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// One module named by an import statement.
struct PythonImport {
    std::string module;  ///< `a.b.c`, or relative with leading dots: `.m`, `..pkg.m`
    int line = 0;        ///< 1-based line of the statement
};

/// The modules the statements of `source` import, in order: `import a.b [as
/// x], c` names a.b and c; `from a.b import x, y` names a.b (Pyccel imports
/// names from a module, never submodules through a package). Statements in
/// indented blocks count; text inside comments and string literals
/// (docstrings with example code) does not. Never throws: unreadable
/// statements are skipped, Pyccel reports them.
std::vector<PythonImport> scan_python_imports(const std::string& source);

/// The file Pyccel compiles for `module` imported by `importer`, as Pyccel
/// 2.x resolves it: relative names from the importer's folder (`.m` beside
/// it, `..m` one folder up); absolute names first below the importer's folder,
/// then below `source_root` (the folder holding the top-level package).
/// Nothing when no such `.py` file exists inside `source_root` (the standard
/// library), and for the libraries Pyccel translates itself (`numpy`, `scipy`,
/// `pyccel`, `math`, `cmath`, `itertools`, `sys`, `typing` and their
/// submodules), which an installed package's source root, site-packages, holds.
/// `is_file` answers whether a candidate is a regular file (a caller that
/// resolves many imports remembers the answers); by default, a stat.
std::optional<std::filesystem::path> resolve_python_import(
    const std::string& module, const std::filesystem::path& importer, const std::filesystem::path& source_root,
    const std::function<bool(const std::filesystem::path&)>& is_file = {});

/// The dotted name of `file` below `source_root`: `<root>/a/b/c.py` -> `a.b.c`.
std::string python_module_name(const std::filesystem::path& file, const std::filesystem::path& source_root);

}  // namespace ck
