// The flags that choose which artifacts a configuration asks for (targets,
// PTX, compiler, options): `status` reads the cache for exactly what `build`
// with the same flags would produce.
#pragma once

#include "cunumpy_kernels/config.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ck::cli {

struct TargetOptions {
    std::vector<std::string> architectures;
    bool ptx = false;
    bool no_ptx = false;
    std::optional<std::string> compiler;
    std::vector<std::string> options;

    void add_to(CLI::App& command);
    /// Applies the flags over `config`. Throws UsageError for a bad value.
    void apply(Config& config) const;
};

}  // namespace ck::cli
