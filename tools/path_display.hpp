// How commands write paths: relative to the current folder when inside it (as
// pre-commit, editors and CI annotations expect), absolute otherwise.
#pragma once

#include <filesystem>
#include <string>

namespace ck::cli {

std::string display_path(const std::filesystem::path& path);

}  // namespace ck::cli
