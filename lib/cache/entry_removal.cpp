#include "cache/entry_removal.hpp"

#include "util/temporary_name.hpp"

#include <cstdio>

namespace ck {

namespace fs = std::filesystem;

bool remove_entry_atomically(const EntryStore& store, const fs::path& entry_dir)
{
    fs::path trash = store.root() / temporary_folder_name;
    std::error_code error;
    fs::create_directories(trash, error);
    fs::path target = trash / unique_temporary_name();
    if (std::rename(entry_dir.c_str(), target.c_str()) != 0) return false;
    fs::remove_all(target, error);
    return true;
}

}  // namespace ck
