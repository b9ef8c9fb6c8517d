// Who can change what the tool loads. A cache shared by a group (group
// write, a setgid root) is fine; one that any user can write is not: anyone
// could replace a cubin that every rank then runs.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace ck {

/// The first of `root`, each folder from `root` down to `entry`, and `files`
/// (paths inside `entry`, with every folder between) that users other than
/// the owner and the group may write, in words with the fix (`chmod o-w
/// ...`); "" when none. `entry` may
/// be empty (the root only). Links are not followed below the root; a path
/// that cannot be read is left to the reader that opens it.
///
/// `cleared`, when given, holds the folders found fine by earlier calls of
/// the same run and gains those found fine now: a plan of hundreds of hits
/// then checks the root and the kind and shard folders once, not per entry.
std::string other_writable_problem(const std::filesystem::path& root, const std::filesystem::path& entry = {},
                                   const std::vector<std::filesystem::path>& files = {},
                                   std::set<std::string>* cleared = nullptr);

}  // namespace ck
