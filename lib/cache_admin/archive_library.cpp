#include "cache_admin/archive_library.hpp"

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
                       "); install it (Debian: apt install libarchive13), and if a file named there is not "
                       "libarchive, take its folder off LD_LIBRARY_PATH";
        return loaded;
    }
    std::vector<std::string> missing;
#define CK_ARCHIVE_LOAD(name)                                                                  \
    loaded.functions.name = reinterpret_cast<decltype(&::name)>(loaded.library.symbol(#name)); \
    if (!loaded.functions.name) missing.push_back(#name);
    CK_ARCHIVE_FUNCTIONS(CK_ARCHIVE_LOAD)
#undef CK_ARCHIVE_LOAD
    if (missing.empty()) return loaded;
    if (missing.size() == std::size(all_functions))  // a file of its name found first, through LD_LIBRARY_PATH
        loaded.error = loaded.library.path() +
                       " is not libarchive (it has none of its functions): cache export "
                       "and import load libarchive by its soname, so take that file's folder off LD_LIBRARY_PATH";
    else
        loaded.error = loaded.library.path() + " lacks " + util::comma_list(missing) +
                       ": cache export and import need libarchive 3.3 or newer, built with zstd (Debian 12's "
                       "libarchive13 is)";
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
