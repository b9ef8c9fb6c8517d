// LD_PRELOAD shim for the end-to-end tests of a cache on a network file
// system (test_shared_filesystems.py): opens of a path ending in
// $CK_ESTALE_SUFFIX fail with ESTALE ("Stale file handle"), as on an NFS
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

bool fail_open(const char* path)
{
    const char* suffix = std::getenv("CK_ESTALE_SUFFIX");
    if (!suffix || !*suffix || !path) return false;
    std::size_t length = std::strlen(path);
    std::size_t suffix_length = std::strlen(suffix);
    if (length < suffix_length || std::strcmp(path + length - suffix_length, suffix) != 0) return false;
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
