// One job's outcome (one kernel and target, or one host module): what every
// kind of job returns and `build --json` reports, below the builder so that
// the host and CuPy jobs need not include it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ck {

/// What happened to one job (one kernel, one target).
enum class JobState {
    hit,          ///< a complete entry with this key was already published
    built,        ///< compiled and published now
    failed,       ///< the compiler rejected it; `log` holds its diagnostics
    would_build,  ///< --dry-run: a miss that a build would compile
};

const char* to_string(JobState state);

/// One job's outcome, as `--json` reports it.
struct JobResult {
    std::string module;         ///< dotted kernel module; for a module that kernels import, its own dotted name
    std::string kernel;         ///< kernel name; empty for a module that kernels import
    std::string kind = "cuda";  ///< the entries' kind: "cuda", or "host" for a Pyccel build
    std::string target;         ///< `sm_90` (cubin), `compute_90` (PTX) or `host` (a Pyccel build)
    std::string
        key;  ///< cache key (64 hex digits); empty when it could not be computed (see BuildRequest::start_tools)
    JobState state = JobState::failed;
    std::filesystem::path entry;                   ///< entry folder (hit, built)
    std::vector<std::filesystem::path> artifacts;  ///< absolute artifact paths (hit, built)
    double seconds =
        0;  ///< wall time of this job in this run (of its compiler run, shared by the targets compiled together)
    /// Compiles: where the time went ("preprocess", "front_end", "ptxas";
    /// "front_end_and_ptxas" for an NVRTC cubin compile that cannot tell
    /// them apart), in seconds; a front end several targets share counts for each.
    std::map<std::string, double> phases;
    std::string log;                      ///< compiler diagnostics, whole (built, failed)
    std::string reason;                   ///< why it compiles (would_build, built): "no entry", or the changed input
    std::string host_module;              ///< host jobs: the dotted Python module Pyccel compiles
    std::filesystem::path cunumpy_entry;  ///< host jobs: `<root>/<stem>-<20 hex>`, where cunumpy's PyccelCache loads it
    /// Host hits under --dry-run: cunumpy's name does not lead to this build
    /// (missing, another module's build of the same text, an older build),
    /// with what fixes it; status reports the artifact stale. Empty otherwise.
    std::string cunumpy_name_problem;
    /// In-place hits only: the extension was built by another tool (no record
    /// of ours, or ours no longer describes it) and is kept because it is
    /// newer than its sources; what `build --in-place` would do about it.
    std::string foreign;
};

}  // namespace ck
