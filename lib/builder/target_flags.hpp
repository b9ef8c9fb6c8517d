// The command-line choices of which artifacts a configuration asks for
// (targets, PTX, compiler, extra options), applied over the tree's Config.
// One implementation for `build`, `status` and `cache path`, so that each
// reads or writes exactly the entries the others name.
#pragma once

#include "cunumpy_kernels/config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ck {

struct TargetFlags {
    std::vector<std::string> architectures;  ///< --arch, already split at commas; empty items ignored
    bool ptx = false;                        ///< --ptx
    bool no_ptx = false;                     ///< --no-ptx
    std::optional<std::string> compiler;     ///< --compiler: nvrtc or nvcc
    std::vector<std::string> options;        ///< -X/--compiler-option, in order
    std::vector<std::string> verbatim;       ///< --verbatim-option, in order: passed unchecked, keyed by spelling

    /// Applies the flags over `config`: architectures replace the config's,
    /// options are appended (relative include folders made absolute against
    /// the working folder, as for --include-dir). Throws UsageError for a bad
    /// architecture, compiler or option, or --ptx with --no-ptx.
    void apply(Config& config) const;
};

/// Narrows `config` to the one target `target` names: `sm_XX` (its cubin,
/// no PTX) or `compute_XX` (the PTX of sm_XX); `sm_XXa`, `compute_XXf` and
/// the like name themselves, suffix kept.
/// Throws UsageError naming `flag` for anything else.
void select_one_target(Config& config, const std::string& target, const std::string& flag);

}  // namespace ck
