// The Pyccel compile both host jobs share: the cache's (host_job.cpp), which
// publishes an entry, and the in-place one (in_place_job.cpp), which installs
// beside the sources. Each keeps only its own publish step, so that what is
// compiled, how it finds its imports and how it is checked, and the host
// library linked from it (host_library.hpp), cannot drift apart between the two.
#pragma once

#include "host/host_job.hpp"
#include "host/host_planner.hpp"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace ck {

/// What compile_host_module left for the job's publish step.
struct PyccelModuleBuild {
    std::string log;                  ///< Pyccel's output, with the workspace's paths put back to the user's
    std::string problem;              ///< why the build failed after Pyccel ran; empty with `ok`
    bool ok = false;                  ///< the extension was written, names `lives_in` and imports
    std::filesystem::path output;     ///< the module's folder below the output root
    std::filesystem::path extension;  ///< `output`/<stem><EXT_SUFFIX>
    /// `output`/<stem>.ck-host.so, the module's host library (either
    /// backend; none for the C backend without HostBuildTools::stc)
    std::optional<std::filesystem::path> library;
};

/// Where an imported module (an index into the plan's modules) was built:
/// the folder holding its `__pyccel__/` (stub, header, objects), in its cache
/// entry or beside its source.
using ImportedBuildFolder = std::function<std::filesystem::path(std::size_t)>;

/// The compile every host job shares, whether it publishes into the cache or
/// beside the sources: links each imported module's stub from `imported`
/// where Pyccel looks for it below `output_root`, copies module `index` of
/// `plan` and the modules it imports into `workspace`/src, runs Pyccel into
/// the module's folder below `output_root`, and checks what it wrote: the
/// extension is there, its wrapper header is rewritten to name `lives_in`
/// (relocate_wrapper_header), and it imports. With either backend it then
/// links the module's host library beside the extension from the module's
/// and its imports' objects (build_host_library), the functions it gives no
/// entry listed in the log; a library that does not link or load fails the
/// build. Throws CacheError when an imported module's stub is missing, the
/// sources cannot be copied or a header relocated.
PyccelModuleBuild compile_host_module(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                                      const std::filesystem::path& workspace, const std::filesystem::path& output_root,
                                      const std::filesystem::path& lives_in, const ImportedBuildFolder& imported);

}  // namespace ck
