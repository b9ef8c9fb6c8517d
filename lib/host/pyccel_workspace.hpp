// What every Pyccel build of one module shares, whether it publishes into
// the cache (host_job) or beside the sources (in_place_job): a private copy
// of the sources to compile from, the wrapper header made to name the folder
// the build will live in, and an import of the new extension in a child.
#pragma once

#include "host/host_planner.hpp"

#include <filesystem>
#include <string>

namespace ck {

/// Where a build's Pyccel workspace goes (a util::TemporaryDir): a unique
/// folder below `<root>/.cunumpy-kernels-tmp/`, so that a killed build's
/// leftovers are removed like every other temporary folder there. The
/// modules are copied into its `src/`.
std::filesystem::path workspace_path(const std::filesystem::path& root);

/// `push_kernels` for `.../push_kernels.py`.
std::string module_stem(const HostModule& module);

/// The folder below `root` that mirrors the module's package folder: `root`
/// itself, without a trailing separator, for a module outside any package
/// (Pyccel writes folders without one into its wrappers).
std::filesystem::path package_folder(const std::filesystem::path& root, const HostModule& module);

/// Writes `module`'s bytes below `sources` at its relative path, with empty
/// `__init__.py` files on the way (Pyccel imports dotted modules to find them,
/// and the user's own `__init__.py` must not run), dated 1970: Pyccel refuses
/// a stub older than its module's source, and the stubs come from earlier
/// builds. Throws CacheError.
void copy_module(const HostModule& module, const std::filesystem::path& sources);

/// Pyccel writes the folder it built in into the module's wrapper header
/// (`__pyccel__/<stem>_wrapper.h`); importers compile that path into their
/// extensions to import the classes a function takes. Rewrites it to
/// `lives_in`, the folder the build is published to. Throws CacheError when
/// the header does not name `built_in` (a Pyccel that lays its wrapper out
/// differently from the checked 2.2 series).
void relocate_wrapper_header(const std::filesystem::path& built_in, const std::filesystem::path& lives_in,
                             const std::string& stem);

/// Imports `extension` as module `stem` in `python` (a child process, in
/// `working_dir`), as cunumpy's PyccelCache loads a build. Returns "" when it
/// imports, else the reason with the interpreter's output.
std::string import_check(const std::filesystem::path& python, const std::filesystem::path& extension,
                         const std::string& stem, const std::filesystem::path& working_dir);

/// `first` ahead of the inherited PYTHONPATH.
std::string python_path_with(const std::filesystem::path& first);

/// fsyncs every regular file below `root` (links are skipped) and `root`.
void sync_tree(const std::filesystem::path& root);

}  // namespace ck
