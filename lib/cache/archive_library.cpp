#include "cache/archive_library.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/dynamic_library.hpp"


namespace ck {

namespace {

struct LoadedArchive {
    util::DynamicLibrary library;
    ArchiveLibrary functions;
    std::string error;  // why it did not load; empty when it did
};

LoadedArchive load()
{
    LoadedArchive loaded;
    loaded.library = util::DynamicLibrary::open_first({"libarchive.so.13", "libarchive.so"}, &loaded.error);
    if (!loaded.library.loaded()) {
        loaded.error = "cannot load libarchive, which cache export and import need (" + loaded.error +
                       "); install it (Debian: apt install libarchive13)";
        return loaded;
    }
    std::string missing;
#define CK_ARCHIVE_LOAD(name)                                                                                          \
    loaded.functions.name = reinterpret_cast<decltype(&::name)>(loaded.library.symbol(#name));                         \
    if (!loaded.functions.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
    CK_ARCHIVE_FUNCTIONS(CK_ARCHIVE_LOAD)
#undef CK_ARCHIVE_LOAD
    if (!missing.empty())
        loaded.error = loaded.library.path() + " lacks " + missing +
                       ": cache export and import need libarchive 3.3 or newer, built with zstd";
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
