#include "cache/archive_library.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/dynamic_library.hpp"
#include "util/text.hpp"

#include <iterator>
#include <string>
#include <vector>


namespace ck {

namespace {

#define CK_ARCHIVE_NAME(name) #name,
constexpr const char* all_functions[] = {CK_ARCHIVE_FUNCTIONS(CK_ARCHIVE_NAME)};
#undef CK_ARCHIVE_NAME

struct LoadedArchive {
    util::DynamicLibrary library;
    ArchiveLibrary functions;
    std::string error;  // why it did not load; empty when it did
};

LoadedArchive load()
{
    LoadedArchive loaded;
    std::string tried;  // each name's dlerror; a later name may still load
    loaded.library = util::DynamicLibrary::open_first({"libarchive.so.13", "libarchive.so"}, &tried);
    if (!loaded.library.loaded()) {
        loaded.error = "cannot load libarchive, which cache export and import need (" + tried +
                       "); install it (Debian: apt install libarchive13)";
        return loaded;
    }
    std::vector<std::string> missing;
#define CK_ARCHIVE_LOAD(name)                                                                                          \
    loaded.functions.name = reinterpret_cast<decltype(&::name)>(loaded.library.symbol(#name));                         \
    if (!loaded.functions.name) missing.push_back(#name);
    CK_ARCHIVE_FUNCTIONS(CK_ARCHIVE_LOAD)
#undef CK_ARCHIVE_LOAD
    if (missing.empty()) return loaded;
    // A file of libarchive's name found first (LD_LIBRARY_PATH) hides the system's.
    std::string what = missing.size() == std::size(all_functions)
                           ? " is not libarchive (it has none of its functions)"
                           : " lacks " + util::comma_list(missing) + " (libarchive 3.3 or newer, built with zstd, has them)";
    loaded.error = loaded.library.path() + what + ": cache export and import load libarchive by its soname, so "
                   "remove that file or the folder holding it from LD_LIBRARY_PATH, or install libarchive "
                   "(Debian: apt install libarchive13)";
    return loaded;
}

}  // namespace

const ArchiveLibrary& ArchiveLibrary::get()
{
    static const LoadedArchive loaded = load();  // once a process; thread-safe since C++11
    if (!loaded.error.empty()) throw CacheError(loaded.error);
    return loaded.functions;
}

}  // namespace ck
