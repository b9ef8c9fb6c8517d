// `status --bundle`: whether a bundle still holds what `build` would produce
// for the tree now, and whether a rank could load what it holds. The keys of
// the tree's kernels are computed for the bundle's targets, compiler and
// options (and, unless given, its interpreter or cunumpy header folder, and
// the cache it was made from) as `status` computes them (no compiler, no
// Python) and compared with the keys the bundle stores. Every artifact is
// checked as a rank checks it before loading (check_bundle_artifact).
// KernelCatalog::from_bundle never compares keys: staleness is only looked
// at when asked.
#pragma once

#include "compilers/cuda_compiler.hpp"
#include "cunumpy_kernels/config.hpp"
#include "runtime/bundle_format.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace ck {

/// One artifact of a kernel that both the bundle and the tree have.
struct BundleArtifactStatus {
    std::string target;
    /// "current", "changed" (the key differs), "unknown" (the key cannot be
    /// computed now) or "corrupt" (a rank would refuse it: check_bundle_artifact)
    std::string state;
    std::string bundle_key;  ///< stored in the bundle
    std::string key;         ///< of the tree now; empty when unknown
    /// changed: the first input that differs; unknown: what is not known;
    /// corrupt: "<file>#<kernel>@<target>: <what>" (check_bundle_artifact)
    std::string reason;
};

/// One kernel of the bundle or of the tree.
struct BundleKernelStatus {
    std::string module;
    std::string name;
    /// "current", "changed" (a key differs, or the kernel gained or lost its
    /// CUDA version), "added" (in the tree, not the bundle), "removed" (in
    /// the bundle, not the tree), "unknown", or "corrupt" (an artifact fails
    /// its checksum or a load check: copy the bundle again, or make it again).
    std::string state;
    std::string reason;  ///< changed without artifacts to compare: "CUDA kernel added", ...
    std::vector<BundleArtifactStatus> artifacts;
};

struct BundleStatus {
    std::filesystem::path bundle;
    std::string created;                      ///< when the bundle was made
    std::vector<std::string> targets;         ///< the bundle's
    std::vector<BundleKernelStatus> kernels;  ///< sorted by module
    std::vector<std::string> warnings;
    std::filesystem::path cache_root;  ///< where the keys were computed; empty: cunumpy's default per package
    BundleToolkit toolkit;             ///< the bundle's (empty for format 1)
    CudaToolkit toolkit_now;           ///< the one status finds (find_cuda_toolkit)
    /// "" when they are the same (or the bundle does not say); else a
    /// sentence naming both, and every artifact whose key is unknown blames it.
    std::string toolkit_change;

    /// Every kernel current: the bundle serves the tree as `build` would.
    bool current() const;
    /// The modules of the kernels in `state`.
    std::vector<std::string> modules(const std::string& state) const;
};

/// The configuration of the tree at a path, with the flags `bundle` got.
using ConfigAt = std::function<Config(const std::filesystem::path& start)>;

/// Compares bundle `file` with the trees `paths` (empty: the paths the
/// bundle was made from) under `config_at(paths.front())`, whose targets are
/// replaced by the bundle's, and whose cache root too unless
/// `cache_dir_given` (the command line named one) or the bundle's root is
/// gone (a warning says so). Throws ArtifactError when the bundle cannot be
/// read, and as `status` does for the trees (UsageError for a tree that is
/// gone: pass its new path).
BundleStatus read_bundle_status(const std::filesystem::path& file, std::vector<std::filesystem::path> paths,
                                const ConfigAt& config_at, bool cache_dir_given = false);

/// `status --bundle --json`: {"bundle", "created", "targets", "cache_root",
/// "toolkit": {"bundle": {"root", "found_by", "compiler"}, "now": {"root",
/// "found_by"}, "change"}, "current", "changed", "added", "removed",
/// "unknown", "corrupt" (modules), "kernels": [{"module",
/// "name", "state", "reason", "artifacts": [{"target", "state", "bundle_key",
/// "key", "reason"}]}], "warnings"}; paths as `display` writes them.
nlohmann::json to_json(const BundleStatus& status,
                       const std::function<std::string(const std::filesystem::path&)>& display);

}  // namespace ck
