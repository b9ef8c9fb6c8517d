// Whether paths are regular files, each asked of the file system once.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ck::util {

/// Answers "is this path a regular file (links followed)?" with one stat per
/// path for the life of the object, which thereby takes the file system as
/// it was when each path was first asked. A walk, a plan or a status reading
/// asks about the same paths many times: every kernel searches the same
/// include folders, every module tries the same import candidates, every
/// kernel of a package asks for the same `__init__.py` chain. Share one
/// object between the readers of one run, never between runs: a file made
/// later stays absent to it. Thread-safe.
class RegularFiles {
public:
    /// Whether `path` was a regular file when first asked; a path that cannot
    /// be stat'ed (absent, no permission) is not one.
    bool contains(const std::filesystem::path& path);

    /// Every path asked so far with its answer, in no set order: what a
    /// reading that shared this object looked at (the key record's
    /// witnesses, cache/key_record.hpp).
    std::vector<std::pair<std::string, bool>> asked() const;

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, bool> known_;
};

}  // namespace ck::util
