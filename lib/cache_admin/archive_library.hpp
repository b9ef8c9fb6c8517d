// libarchive, loaded when an archive is first read or written. Only `cache
// export` and `cache import` use it, and linking it made every command pay
// for loading it and its ten dependencies (ICU and five compressors among
// them): about 2 ms of each `status`, `build` and pre-commit hook's start.
#pragma once

#include <archive.h>
#include <archive_entry.h>

namespace ck {

// The libarchive functions the cache's archives use, each named as in
// archive.h (libarchive's ABI, stable since 3.0: soname libarchive.so.13).
#define CK_ARCHIVE_FUNCTIONS(X)                \
    X(archive_error_string)                    \
    X(archive_entry_new)                       \
    X(archive_entry_free)                      \
    X(archive_entry_pathname)                  \
    X(archive_entry_filetype)                  \
    X(archive_entry_size)                      \
    X(archive_entry_set_pathname)              \
    X(archive_entry_set_size)                  \
    X(archive_entry_set_filetype)              \
    X(archive_entry_set_perm)                  \
    X(archive_entry_set_mtime)                 \
    X(archive_write_new)                       \
    X(archive_write_set_format_pax_restricted) \
    X(archive_write_add_filter_zstd)           \
    X(archive_write_open_filename)             \
    X(archive_write_header)                    \
    X(archive_write_data)                      \
    X(archive_write_close)                     \
    X(archive_write_free)                      \
    X(archive_read_new)                        \
    X(archive_read_support_format_tar)         \
    X(archive_read_support_filter_zstd)        \
    X(archive_read_support_filter_none)        \
    X(archive_read_open_filename)              \
    X(archive_read_next_header)                \
    X(archive_read_data)                       \
    X(archive_read_free)

struct ArchiveLibrary {
#define CK_ARCHIVE_MEMBER(name) decltype(&::name) name = nullptr;
    CK_ARCHIVE_FUNCTIONS(CK_ARCHIVE_MEMBER)
#undef CK_ARCHIVE_MEMBER

    /// The process's libarchive, loaded (dlopen) on the first call and kept.
    /// Throws CacheError when libarchive.so.13 cannot be loaded or lacks one
    /// of the functions (install Debian's libarchive13, or the distribution's
    /// libarchive 3.x with zstd support).
    static const ArchiveLibrary& get();
};

}  // namespace ck
