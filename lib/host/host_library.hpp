// The host library of a module (doc/host-libraries.md): Pyccel's objects of
// the module and of the modules it imports, Pyccel's support objects (such as
// pyc_math), STC, and the generated shim (host_shim.hpp), linked into one
// shared library with no Python in it, and loaded once before it is
// published. With the Fortran backend, the module's `bind_c_<module>`
// wrappers stand in for STC: its object and the Fortran objects are linked
// with gfortran (libgfortran is the only library it adds).
#pragma once

#include "host/host_shim.hpp"

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// Where STC's headers and static library are, as Pyccel found them.
struct StcInstall {
    std::filesystem::path include_dir;  ///< holds `stc/cspan.h`
    std::filesystem::path library;      ///< `libstc.a`
};

/// Asks `python` where Pyccel's STC is, in Pyccel 2.2's order
/// (codegen/compiling/library_config.py): `pkg-config stc` 5.x, then the copy
/// its wheel ships (`pyccel.extensions.stc_install_<family>`), then
/// `$PYCCEL_CONFIG_HOME/<family>/STC` (default `~/.pyccel`), in the
/// environment Pyccel runs in (run_variables()). Nothing, with `why` set,
/// when none is found.
std::optional<StcInstall> find_stc(const std::filesystem::path& python, const std::string& compiler_family,
                                   std::string* why);

/// find_stc asked once, by the first host job that needs it (status and
/// `--dry-run` never do). Safe to share between jobs' threads.
class StcLocator {
public:
    StcLocator(std::filesystem::path python, std::string compiler_family)
        : python_(std::move(python)), family_(std::move(compiler_family))
    {
    }

    /// find_stc's answer; `why` is set to its reason when there is none.
    const std::optional<StcInstall>& get(std::string* why) const;

private:
    std::filesystem::path python_;
    std::string family_;
    mutable std::once_flag once_;
    mutable std::optional<StcInstall> found_;
    mutable std::string why_;
};

/// A module Pyccel compiled: its `__pyccel__/` folder (stub, header,
/// objects, support libraries in subfolders) and its stem.
struct PyccelBuiltModule {
    std::filesystem::path pyccel_folder;
    std::string stem;  ///< `push_kernels`
};

/// One module's library to link.
struct HostLibraryRequest {
    PyccelBuiltModule module;
    /// Every module it imports, directly or not: their headers are included
    /// by the module's, their objects are linked in.
    std::vector<PyccelBuiltModule> imported;
    ShimBackend backend = ShimBackend::c;  ///< the backend Pyccel compiled with
    std::optional<StcInstall> stc;         ///< the C backend's STC; the Fortran backend needs none
    bool openmp = false;                   ///< link with -fopenmp, as Pyccel compiled with it
    std::filesystem::path output;          ///< the library to write
    std::filesystem::path scratch;         ///< a private folder for the shim and its object
};

/// What build_host_library did.
struct HostLibraryBuild {
    bool ok = false;
    std::string problem;               ///< why it failed, with the compiler's or dlopen's message
    std::vector<std::string> skipped;  ///< "kernel 'f': <reason>": functions without an entry
    std::string description;           ///< the text the library embeds (host_library_description)
};

/// Reads the module's stub, writes the shim, compiles and links it with the
/// objects (`gcc -shared -Wl,-z,defs`, gfortran for the Fortran backend: a
/// symbol left undefined, a Python one above all, fails the link), exporting
/// only the shim's `ck_host_*` symbols, and loads the result once (dlopen
/// RTLD_NOW) to check it. Never throws for a failed step: `problem` says
/// which and why (a C build without `stc` is one).
HostLibraryBuild build_host_library(const HostLibraryRequest& request);

/// `<stem>.ck-host.so`: the library's name beside the module's extension (a
/// name Python's import never takes for a module).
std::string host_library_file(const std::string& stem);

}  // namespace ck
