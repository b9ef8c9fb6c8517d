// Flags every command that reads kernel trees shares, merged over the nearest
// pyproject.toml's [tool.cunumpy-kernels].
#pragma once

#include "cunumpy_kernels/config.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck::cli {

/// Refuses an empty value (`--cache-dir ''`), which no path option can mean,
/// as a usage error naming the flag.
CLI::Validator non_empty_path();

struct TreeOptions {
    std::vector<std::string> paths;
    std::optional<std::string> host_suffix;
    std::optional<std::string> cuda_suffix;
    std::optional<std::string> cache_dir;
    std::optional<std::string> cache_name;
    std::vector<std::string> include_dirs;
    std::optional<std::string> python;
    std::optional<std::string> cunumpy_include_dir;
    std::optional<std::string> cuda_root;
    bool no_name_check = false;
    std::optional<std::string> language;
    bool openmp = false;
    bool no_openmp = false;
    bool in_place = false;

    void add_to(CLI::App& command);
    /// The config of the tree of the first path (or the current folder), with
    /// these flags applied. Throws ConfigError / UsageError.
    Config resolve() const;
    /// The config of the tree of `start`, with these flags applied. Throws
    /// ConfigError / UsageError.
    Config resolve_at(const std::filesystem::path& start) const;
    std::vector<std::filesystem::path> path_list() const;
};

/// `dir` made absolute. Throws UsageError naming `flag` when it is not a folder.
std::filesystem::path existing_dir(const std::string& dir, const char* flag);

}  // namespace ck::cli
