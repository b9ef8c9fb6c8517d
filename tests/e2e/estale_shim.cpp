// LD_PRELOAD shim for the end-to-end tests of a cache on a network file
// system (test_shared_filesystems.py): opens of a path ending in
// $CK_ESTALE_SUFFIX (or in a folder named $CK_ESTALE_FOLDER) fail with ESTALE ("Stale file handle"), as on an NFS
// client while another node replaces the file, the first $CK_ESTALE_COUNT
// times in the process (every time when unset). Other opens pass through.

// The build asks for 64-bit offsets, and fcntl.h then names open64 'open':
// both are defined here, each by its own name.
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<long> failures_left{-1};  // -1: not read from the environment yet

// Whether the first `length` characters of `text` end with `suffix`.
bool ends_with(const char* text, std::size_t length, const char* suffix)
{
    std::size_t suffix_length = std::strlen(suffix);
    return length >= suffix_length && std::memcmp(text + length - suffix_length, suffix, suffix_length) == 0;
}

// A path ending in $CK_ESTALE_SUFFIX, or a file right inside a folder named
// $CK_ESTALE_FOLDER (whose names, such as probe records', are not known).
bool chosen(const char* path)
{
    if (!path) return false;
    std::size_t length = std::strlen(path);
    const char* suffix = std::getenv("CK_ESTALE_SUFFIX");
    if (suffix && *suffix && ends_with(path, length, suffix)) return true;
    const char* folder = std::getenv("CK_ESTALE_FOLDER");
    if (!folder || !*folder) return false;
    const char* slash = std::strrchr(path, '/');
    if (!slash) return false;
    auto parent_length = static_cast<std::size_t>(slash - path), folder_length = std::strlen(folder);
    return ends_with(path, parent_length, folder) &&
           (parent_length == folder_length || path[parent_length - folder_length - 1] == '/');
}

bool fail_open(const char* path)
{
    if (!chosen(path)) return false;
    long unset = -1;
    const char* count = std::getenv("CK_ESTALE_COUNT");
    failures_left.compare_exchange_strong(unset, count ? std::atol(count) : 1L << 40);
    long left = failures_left.load();
    while (left > 0 && !failures_left.compare_exchange_weak(left, left - 1)) {}
    return left > 0;
}

using OpenFunction = int (*)(const char*, int, ...);

int forward(const char* name, const char* path, int flags, mode_t mode)
{
    if (fail_open(path)) {
        errno = ESTALE;
        return -1;
    }
    auto real = reinterpret_cast<OpenFunction>(::dlsym(RTLD_NEXT, name));
    return real(path, flags, mode);
}

mode_t mode_of(int flags, std::va_list arguments)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(arguments, int)) : 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int open(const char* path, int flags, ...)
{
    std::va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_of(flags, arguments);
    va_end(arguments);
    return forward("open", path, flags, mode);
}

extern "C" __attribute__((visibility("default"))) int open64(const char* path, int flags, ...)
{
    std::va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_of(flags, arguments);
    va_end(arguments);
    return forward("open64", path, flags, mode);
}
