// Running one host job: Pyccel compiles a module where its imports' entries
// are found, the build is checked by importing it in a child process, and it
// is published as an immutable entry that cunumpy's name then points at.
//
// Entry layout (see README, "Host builds"): `host/<k0k1>/<key>/` mirrors the
// package folders below the source root, because Pyccel finds an imported
// module's stub at `<output>/<relative path of its folder>/__pyccel__/` and
// writes the absolute build folder of a module into its wrapper header, from
// where importers copy it into their extensions (to import the classes a
// function takes). The entry holds the module's `<stem><EXT_SUFFIX>` and
// `__pyccel__/` at `<package path>/`, and links to the stubs of every module
// it imports, directly or not, at theirs. It also holds
// the module's host library, `<stem>.ck-host.so` beside the extension
// (host_library.hpp), the entry's second artifact.
#pragma once

#include "host/host_library.hpp"
#include "host/host_planner.hpp"
#include "host/pyccel_compiler.hpp"
#include "scheduler/job_result.hpp"
#include "cache/cache.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace ck {

/// What running host jobs needs beyond the plan.
struct HostBuildTools {
    const PyccelCompiler* compiler = nullptr;
    std::filesystem::path python;  ///< the interpreter that imports each build once before it is published
    std::string ext_suffix;        ///< its EXT_SUFFIX
    std::string language;          ///< "c" or "fortran"
    /// Where the C backend's host libraries find STC; none: no C-backend
    /// host library is linked (the Fortran backend needs no STC)
    std::shared_ptr<const StcLocator> stc;
};

/// The folder inside entry `key` that holds the module's extension: the
/// path Pyccel writes into importers' extensions.
std::filesystem::path host_build_folder(const EntryStore& store, const std::string& key, const HostModule& module);

/// The extension's path inside its entry: `<package path>/<stem><ext_suffix>`.
std::string host_artifact_file(const HostModule& module, const std::string& ext_suffix);

/// Compiles modules[index] of `plan` and publishes it in `store`, then points
/// cunumpy's name for it at the new entry. The entries of its imports must
/// exist. Pyccel's errors, a failed import check and cache errors are failed
/// results with the diagnostics in `log`, never exceptions.
JobResult run_host_job(const HostPlan& plan, std::size_t index, const HostBuildTools& tools, const EntryStore& store);

/// The result of a host job whose entry is in `store` (state hit).
JobResult host_hit_result(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                          const EntryStore& store);

/// The fields every result of modules[index] shares: names, target, key.
JobResult host_base_result(const HostPlan& plan, std::size_t index, const EntryStore& store);

}  // namespace ck
