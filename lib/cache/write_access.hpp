// Who can change what the tool loads. A cache shared by a group (group
// write, a setgid root) is fine; one that any user can write is not: anyone
// could replace a cubin that every rank then runs.
#pragma once

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ck {

/// Folders found not writable by others, remembered by one reader (a run of
/// the CLI, a cache object of the runtime) so that the folders above its
/// entries are checked once, not per entry. Thread-safe.
class ClearedFolders {
public:
    bool contains(const std::string& folder) const;
    void add(const std::string& folder);

private:
    mutable std::mutex mutex_;
    std::set<std::string> folders_;
};

/// The first of `root`, each folder from `root` down to `entry`, `entry`
/// itself, and `files` (paths inside `entry`, with every folder between)
/// that users other than the owner and the group may write, in words with
/// the fix (`chmod o-w ...`); "" when none. `entry` may be empty (the root
/// only), a folder or a file. Links are not followed below the root; a path
/// that cannot be read is left to the reader that opens it.
///
/// `cleared`, when given, holds the folders found fine by earlier calls of
/// the same reader and gains the root and the folders above `entry` found
/// fine now: a plan of hundreds of hits then checks the root and the kind and
/// shard folders once, not per entry. `entry` and what it holds, which a
/// writer could swap, are checked at every call.
std::string other_writable_problem(const std::filesystem::path& root, const std::filesystem::path& entry = {},
                                   const std::vector<std::filesystem::path>& files = {},
                                   ClearedFolders* cleared = nullptr);

}  // namespace ck
