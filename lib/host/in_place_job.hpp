// Running one in-place job: Pyccel compiles a module from a private copy, as
// if in place (the wrapper names the module's own folder, the imported
// modules' stubs are their in-place ones), the build is checked by importing
// it in a child process, and then each file appears beside the source by an
// atomic rename, where `pyccel compile <module>.py` without `--output` puts
// it: `<folder>/<stem><EXT_SUFFIX>` and `<folder>/__pyccel__/...`. The record
// (in_place_record.hpp) is written last; a failed build touches nothing.
#pragma once

#include "host/host_job.hpp"
#include "host/host_planner.hpp"
#include "scheduler/job_result.hpp"
#include "cache/cache.hpp"

#include <filesystem>
#include <string>

namespace ck {

/// The fields every in-place result of modules[index] shares: kind
/// "in-place", target "host", names, key, and the module's folder as entry.
JobResult in_place_base_result(const HostPlan& plan, std::size_t index);

/// Builds modules[index] in place. The in-place builds of its imports must
/// exist. `scratch` is the cache store whose temporary area holds the copy
/// Pyccel compiles from, and whose failure records `status` reads. Pyccel's
/// errors, a failed import check and file errors are failed results with
/// the diagnostics in `log`, never exceptions.
JobResult run_in_place_job(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                           const EntryStore& scratch);

}  // namespace ck
