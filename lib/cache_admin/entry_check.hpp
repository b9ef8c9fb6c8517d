// The soundness check shared by `cache verify` and `cache export`.
#pragma once

#include "cache_admin/cache_maintenance.hpp"

#include <string>

namespace ck {

/// The first thing wrong with `entry` (unreadable manifest, key not matching
/// its inputs or folder, an artifact missing, of the wrong size or SHA-256),
/// or "" when it is sound. Reads every artifact.
std::string entry_problem(const EntryInfo& entry);

}  // namespace ck
