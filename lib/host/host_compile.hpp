// The Pyccel compile both host jobs share: the cache's (host_job.cpp), which
// publishes an entry, and the in-place one (in_place_job.cpp), which installs
// beside the sources. Each keeps only its own publish step, so that what is
// compiled, and how it is checked, cannot drift apart between the two.
#pragma once

#include "host/host_job.hpp"
#include "host/host_planner.hpp"

#include <cstddef>
#include <filesystem>
#include <string>

namespace ck {

/// What compile_host_module left for the job's publish step.
struct PyccelModuleBuild {
    std::string log;                  ///< Pyccel's output, with the workspace's paths put back to the user's
    std::string problem;              ///< why the build failed after Pyccel ran; empty with `ok`
    bool ok = false;                  ///< the extension was written, names `lives_in` and imports
    std::filesystem::path output;     ///< the module's folder below the output root
    std::filesystem::path extension;  ///< `output`/<stem><EXT_SUFFIX>
};

/// The compile every host job shares, whether it publishes into the cache or
/// beside the sources: copies module `index` of `plan` and the modules it
/// imports into `workspace`/src, runs Pyccel into the module's folder below
/// `output_root` (where the caller has linked the imported modules' stubs),
/// and checks what it wrote: the extension is there, its wrapper header is
/// rewritten to name `lives_in` (relocate_wrapper_header), and it imports.
/// Throws CacheError when the sources cannot be copied or a header relocated.
PyccelModuleBuild compile_host_module(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                                      const std::filesystem::path& workspace, const std::filesystem::path& output_root,
                                      const std::filesystem::path& lives_in);

}  // namespace ck
