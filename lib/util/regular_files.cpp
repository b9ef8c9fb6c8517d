#include "util/regular_files.hpp"

#include "util/checksummed.hpp"

#include <sys/stat.h>

namespace ck::util {

namespace {

std::optional<FileStat> regular_stat_of(const struct stat& info)
{
    if (!S_ISREG(info.st_mode)) return std::nullopt;
    return FileStat{static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
                    static_cast<std::uint64_t>(info.st_size), ns_of(info.st_mtim), ns_of(info.st_ctim)};
}

}  // namespace

std::optional<FileStat> regular_file_stat(const char* path)
{
    struct stat info {};
    if (::stat(path, &info) != 0) return std::nullopt;
    return regular_stat_of(info);
}

std::optional<FileStat> regular_file_stat(int fd)
{
    struct stat info {};
    if (::fstat(fd, &info) != 0) return std::nullopt;
    return regular_stat_of(info);
}

bool RegularFiles::contains(const std::filesystem::path& path)
{
    std::lock_guard lock(mutex_);
    auto [it, added] = known_.try_emplace(path.native());
    if (added) it->second = regular_file_stat(path.c_str());
    return it->second.has_value();
}

std::vector<std::pair<std::string, std::optional<FileStat>>> RegularFiles::asked() const
{
    std::lock_guard lock(mutex_);
    return {known_.begin(), known_.end()};
}

}  // namespace ck::util
