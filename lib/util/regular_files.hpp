// Whether paths are regular files, each asked of the file system once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ck::util {

/// What stat(2) says of a file's identity and content: equal stats of a
/// file whose times are old enough mean the same bytes (git's index rule).
struct FileStat {
    std::uint64_t device = 0, inode = 0, size = 0;
    std::int64_t modified_ns = 0, changed_ns = 0;
    bool operator==(const FileStat&) const = default;
};

/// The stat of `path`, links followed, when it is a regular file; none when
/// it is not one or cannot be stat'ed (absent, no permission).
std::optional<FileStat> regular_file_stat(const char* path);

/// The stat of the file open as `fd` when it is a regular file; none
/// otherwise: the stat of what was read, whatever its path names meanwhile.
std::optional<FileStat> regular_file_stat(int fd);

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

    /// Every path asked so far with the stat its answer came from (none: not
    /// a regular file), in no set order: what a reading that shared this
    /// object looked at, as it saw it (the key record's witnesses,
    /// cache/key_record.hpp).
    std::vector<std::pair<std::string, std::optional<FileStat>>> asked() const;

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::optional<FileStat>> known_;
};

}  // namespace ck::util
