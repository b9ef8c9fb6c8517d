// `cunumpy-kernels bundle`: one file holding a tree's kernel catalog, the
// cubins and PTX of its CUDA kernels for a configuration's targets and the
// host libraries of its Pyccel modules for this platform, taken from the
// cache `build` filled (format: runtime/bundle_format.hpp). Ranks
// then open it with KernelCatalog::from_bundle, with one open and one read.
#pragma once

#include "cunumpy_kernels/config.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ck {

/// What to bundle: the trees and configuration `build` got, and where to write.
struct BundleRequest {
    std::vector<std::filesystem::path> paths;  ///< kernel trees; empty: the current folder
    Config config;                             ///< merged with flags, as build's
    std::filesystem::path output;              ///< the bundle file
};

/// What was written.
struct BundleSummary {
    std::filesystem::path output;
    std::size_t kernels = 0;           ///< every kernel, ported or not
    std::size_t ported = 0;            ///< with a CUDA kernel
    std::vector<std::string> targets;  ///< of every ported kernel
    std::size_t artifacts = 0;
    std::uint64_t bytes = 0;            ///< the file's size
    std::vector<std::string> warnings;  ///< of the walk and the cache; a kernel without a host library
};

/// Plans the tree as `build --dry-run` would (no compiler and no Python is
/// started), takes every artifact of every ported kernel and target from the
/// cache, checks each against its manifest's SHA-256 and with the load checks
/// `build` ran (check_artifact), records the cache root and the toolkit the
/// keys were computed with, takes each Pyccel kernel's host library as the
/// runtime finds it (find_host_library: the current cache entry's, else the
/// in-place build's) or records why there is none (also a warning: a
/// missing host library never fails the bundle), and publishes the bundle atomically (a temporary
/// file beside `output`, renamed over it).
///
/// Throws ArtifactError naming each kernel and target whose current artifact
/// the cache lacks (stale, missing, failed, or its key unknown), saying to run
/// `cunumpy-kernels build` with the same options, and naming an artifact
/// whose bytes differ from its manifest or fail a load check; UsageError and ConfigError as build;
/// SourceError when a source cannot be read; CacheError when `output` cannot
/// be written (nothing is replaced then).
BundleSummary write_bundle(const BundleRequest& request);

}  // namespace ck
