// `status --bundle`: whether a bundle still holds what `build` would produce
// for the tree now. The keys of the tree's kernels are computed for the
// bundle's targets, compiler and options (and, unless given, its interpreter
// or cunumpy header folder) as `status` computes them (no compiler, no
// Python) and
// compared with the keys the bundle stores. KernelCatalog::from_bundle never
// checks this: staleness is only looked at when asked.
#pragma once

#include "cunumpy_kernels/config.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace ck {

/// One artifact of a kernel that both the bundle and the tree have.
struct BundleArtifactStatus {
    std::string target;
    std::string state;       ///< "current", "changed" (the key differs), "unknown" (the key cannot be computed now) or "corrupt" (the bytes fail their checksum)
    std::string bundle_key;  ///< stored in the bundle
    std::string key;         ///< of the tree now; empty when unknown
    std::string reason;      ///< changed: the first input that differs; unknown: what is not known
};

/// One kernel of the bundle or of the tree.
struct BundleKernelStatus {
    std::string module;
    std::string name;
    /// "current", "changed" (a key differs, or the kernel gained or lost its
    /// CUDA version), "added" (in the tree, not the bundle), "removed" (in
    /// the bundle, not the tree), "unknown", or "corrupt" (an artifact's
    /// bytes fail their checksum: make the bundle again, or copy it again).
    std::string state;
    std::string reason;  ///< changed without artifacts to compare: "CUDA kernel added", ...
    std::vector<BundleArtifactStatus> artifacts;
};

struct BundleStatus {
    std::filesystem::path bundle;
    std::string created;               ///< when the bundle was made
    std::vector<std::string> targets;  ///< the bundle's
    std::vector<BundleKernelStatus> kernels;  ///< sorted by module
    std::vector<std::string> warnings;

    /// Every kernel current: the bundle serves the tree as `build` would.
    bool current() const;
    /// The modules of the kernels in `state`.
    std::vector<std::string> modules(const std::string& state) const;
};

/// The configuration of the tree at a path, with the flags `bundle` got.
using ConfigAt = std::function<Config(const std::filesystem::path& start)>;

/// Compares bundle `file` with the trees `paths` (empty: the paths the
/// bundle was made from) under `config_at(paths.front())`, whose targets are
/// replaced by the bundle's. Throws ArtifactError when the bundle cannot be
/// read, and as `status` does for the trees (UsageError for a tree that is
/// gone: pass its new path).
BundleStatus read_bundle_status(const std::filesystem::path& file, std::vector<std::filesystem::path> paths,
                                const ConfigAt& config_at);

/// `status --bundle --json`: {"bundle", "created", "targets", "current",
/// "changed", "added", "removed", "unknown" (modules), "kernels": [{"module",
/// "name", "state", "reason", "artifacts": [{"target", "state", "bundle_key",
/// "key", "reason"}]}], "warnings"}; paths as `display` writes them.
nlohmann::json to_json(const BundleStatus& status,
                       const std::function<std::string(const std::filesystem::path&)>& display);

}  // namespace ck
