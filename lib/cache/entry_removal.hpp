// Removing an entry so that no reader ever sees part of it: rename it into
// the temporary folder first (one atomic step), then delete it there.
#pragma once

#include "cache/cache.hpp"

#include <filesystem>

namespace ck {

/// Returns false when the entry was already gone or could not be moved.
bool remove_entry_atomically(const EntryStore& store, const std::filesystem::path& entry_dir);

}  // namespace ck
