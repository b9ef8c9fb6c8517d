// `status --bundle FILE`: whether a bundle still matches its tree.
#pragma once

#include "target_options.hpp"
#include "terminal.hpp"
#include "tree_options.hpp"

#include <filesystem>

namespace ck::cli {

/// Compares `bundle` with the trees of `tree` (default: the ones it was made
/// from) under `tree`'s and `targets`' flags, prints what changed (or one
/// JSON document), and returns the exit code: 0 current, 1 stale.
int run_status_bundle(const std::filesystem::path& bundle, const TreeOptions& tree, const TargetOptions& targets,
                      bool json, Terminal& terminal);

}  // namespace ck::cli
