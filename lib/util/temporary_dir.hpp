// A private folder that lives as long as its owner: the Pyccel workspace of
// a host build, the scratch folder of a compiler process.
#pragma once

#include <filesystem>

namespace ck::util {

class TemporaryDir {
public:
    /// Creates `path` (mode 0700) and any missing parent. Throws CacheError
    /// naming the folder and why it cannot be created.
    explicit TemporaryDir(std::filesystem::path path);
    /// Removes the folder and everything in it; errors are ignored (a later
    /// run sweeps what is left, see is_stale_temporary).
    ~TemporaryDir();
    TemporaryDir(const TemporaryDir&) = delete;
    TemporaryDir& operator=(const TemporaryDir&) = delete;

    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace ck::util
