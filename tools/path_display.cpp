#include "path_display.hpp"

namespace ck::cli {

namespace fs = std::filesystem;

std::string display_path(const fs::path& path)
{
    std::error_code error;
    fs::path here = fs::current_path(error);
    if (error || path.is_relative()) return path.string();
    fs::path relative = path.lexically_relative(here);
    if (relative.empty() || *relative.begin() == "..") return path.string();
    return relative.string();
}

}  // namespace ck::cli
