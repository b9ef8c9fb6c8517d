#include "util/regular_files.hpp"

namespace ck::util {

bool RegularFiles::contains(const std::filesystem::path& path)
{
    std::lock_guard lock(mutex_);
    auto [it, added] = known_.try_emplace(path.native(), false);
    if (added) {
        std::error_code error;
        it->second = std::filesystem::is_regular_file(path, error);
    }
    return it->second;
}

std::vector<std::pair<std::string, bool>> RegularFiles::asked() const
{
    std::lock_guard lock(mutex_);
    return {known_.begin(), known_.end()};
}

}  // namespace ck::util
