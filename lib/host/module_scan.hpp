// The Python modules an in-place build compiles beyond the kernels' own: every
// file of the trees named `*<host suffix>.py` or `*<host suffix>_*.py`, which
// a package's Python code imports directly (`struphy compile` takes every
// file whose name holds "kernels").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ck {

/// A Python module found outside the kernel walk.
struct PythonModuleFile {
    std::filesystem::path file;         ///< absolute, lexically normal
    std::filesystem::path source_root;  ///< the folder holding its top-level package
};

/// Every `*<host_suffix>.py` and `*<host_suffix>_*.py` (Struphy's
/// `evaluation_kernels_1d.py`) below the folders `paths` (sorted): hidden
/// folders, `__pycache__` and `__pyccel__` are not entered, and pytest's test
/// files (`test_*.py`) are left out. Throws SourceError when a folder cannot
/// be listed.
std::vector<PythonModuleFile> find_suffix_modules(const std::vector<std::filesystem::path>& paths,
                                                  const std::string& host_suffix);

/// `file` with its source root: the parent of the highest folder of an
/// unbroken chain of `__init__.py` above it (the walker's rule for kernels);
/// the file's own folder when that holds no `__init__.py`.
PythonModuleFile python_module_file(const std::filesystem::path& file);

}  // namespace ck
