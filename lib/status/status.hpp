// How far a code's port has come, for people and for CI: which kernels have
// a CUDA version, whether each kernel's versions take the same parameters,
// and the state of every artifact in the cache for the current configuration.
//
// Reads sources and the cache only: it starts no compiler and no Python (see
// BuildRequest::start_tools), so it runs where neither exists; except that
// asking for CuPy's cache (StatusRequest::cupy) starts the Python with CuPy,
// and configured struct headers (Config::struct_headers) start the tree's
// Python when one changed or a module its writer imports did. Host libraries
// (doc/host-libraries.md) are loaded as the runtime loads them, which needs
// no Python.
#pragma once

#include "builder/build.hpp"
#include "cupy_cache/cupy_cache.hpp"
#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "signatures/signatures.hpp"
#include "struct_headers/header_check.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// The porting line of cunumpy's KernelCatalog.summary(): "CUDA kernels: 2 of
/// 3 (missing: sort)", naming at most `max_missing` kernels without CUDA (in
/// the order given) and then "..."; without the parenthesis when every
/// kernel has one.
std::string porting_summary(const std::vector<KernelSource>& kernels, std::size_t max_missing = 10);

/// The state of one artifact in the cache, for the current configuration.
enum class ArtifactState {
    built,    ///< a complete entry with the current key exists
    stale,    ///< an entry exists for older inputs; `reason` names the input that changed
    missing,  ///< no entry for this kernel and target was ever recorded
    failed,   ///< the last build of exactly these inputs failed
    unknown,  ///< the key needs a fact status may not learn (see BuildRequest::start_tools); `reason` says which
    foreign,  ///< in place: another tool built the extension; it is newer than its sources, but its inputs are unknown
};

/// "built", "stale", "missing", "failed", "unknown" or "foreign", as `status` writes it.
const char* to_string(ArtifactState state);

struct ArtifactStatus {
    std::string kind;    ///< "cuda", or the kind of a host build
    std::string target;  ///< `sm_90`, `compute_90`, ...
    ArtifactState state = ArtifactState::missing;
    std::string reason;  ///< stale: what changed; failed: the first line of the log; unknown: what is not known
    std::string key;     ///< the current key; empty when unknown
    /// failed because the cubin lays out the parameters otherwise than the
    /// runtime packs them (or the struct headers cannot say how): status
    /// exits 1 on it whatever the gates, as build does.
    bool layout_mismatch = false;
};

/// An in-place module that is no kernel's host module (one that kernels or
/// the package's Python code import), with its artifact.
struct ModuleStatus {
    std::string module;  ///< dotted name
    ArtifactStatus artifact;
};

/// Whether the runtime can call a kernel's Pyccel version from the cache
/// without Python, as KernelCatalog::from_package decides it when it opens
/// (runtime/cached_host.hpp): the host library of the kernel's current host
/// entry, loaded and read.
struct HostLibraryStatus {
    bool callable = false;
    /// Not callable: why, as the catalog's warning says it (the parameter and
    /// its type the shim does not handle, a library that does not load).
    std::string reason;
};

struct KernelStatus {
    KernelSource kernel;
    KernelSignatures signatures;
    std::vector<ArtifactStatus> artifacts;  ///< by target, as build plans them
    /// None when there is no host library to look at: the kernel has no
    /// Pyccel module, its module has no current host entry with a library
    /// (not built, stale, the Fortran backend), or host builds are not
    /// reported (StatusRequest::host).
    std::optional<HostLibraryStatus> host_library;
};

/// What `status` reads: the trees and the configuration `build` would use.
struct StatusRequest {
    std::vector<std::filesystem::path> paths;  ///< kernel trees; empty: the current folder
    Config config;
    bool host = true;  ///< report host (Pyccel) builds, as BuildRequest::host
    bool cuda = true;  ///< report CUDA artifacts, as BuildRequest::cuda
    /// Also report CuPy's kernel cache (artifacts of kind "cupy", one per
    /// compute capability): starts `config.python` with CuPy, which compiles
    /// nothing (cupy_cache/cupy_fill.hpp).
    bool cupy = false;
    std::optional<std::filesystem::path> cupy_cache_dir{};  ///< CUPY_CACHE_DIR; unset: CuPy's own
};

struct StatusReport {
    std::vector<KernelStatus> kernels;     ///< sorted by module
    std::vector<std::string> warnings;     ///< from walking the trees and locating caches
    std::vector<ModuleStatus> modules;     ///< in place (Config::in_place) only: the other modules built, by name
    std::optional<CupyInstallation> cupy;  ///< StatusRequest::cupy: which CuPy looked, or why none could
    /// The configured struct headers that are not what their writers write
    /// (check_struct_headers; the writers' Python runs unless a header passed
    /// before with the same inputs), or that could not be checked.
    std::vector<StructHeaderFinding> struct_headers;

    std::string summary(std::size_t max_missing = 10) const;  ///< porting_summary of the kernels
    bool all_ported() const;                                  ///< every kernel has a CUDA version
    bool all_built()
        const;  ///< every artifact (of kernels and modules) is built (unknown and foreign count as not built)
    bool signatures_agree() const;  ///< no mismatch, nothing unreadable, every struct header current
};

/// Reads the trees and the cache. Throws UsageError for bad paths, ConfigError
/// for bad configuration, SourceError when a kernel or header cannot be read.
StatusReport read_status(const StatusRequest& request);

/// The CI gates of `status`; each that fails adds a message to the result.
struct StatusGates {
    bool require_cuda = false;      ///< every kernel ported
    bool require_built = false;     ///< every artifact present and current
    bool check_signatures = false;  ///< every kernel's versions agree and every struct header is current
};

/// One message per failed gate, naming the kernels (or artifacts) that fail it;
/// and, whatever the gates, one for cubins whose parameter layout fails.
std::vector<std::string> failed_gates(const StatusReport& report, const StatusGates& gates);

/// `status --json`: {"summary", "with_cuda", "without_cuda", "counts",
/// "kernels": [{"module", "name", "folder", "host": [kinds], "cuda": file |
/// null, "signatures": agreement, "findings": [messages], "artifacts":
/// [{"kind", "target", "state", "reason", "key"}], "host_library": null |
/// {"callable", "reason"}}], "modules": [{"module",
/// "kind", "target", "state", "reason", "key"}] (in place), "warnings",
/// "cupy" (StatusRequest::cupy only: CupyInstallation's JSON)}. Paths are
/// written as `display` returns them.
nlohmann::json to_json(const StatusReport& report,
                       const std::function<std::string(const std::filesystem::path&)>& display);

}  // namespace ck
