// A kernel's Pyccel host version taken from the cache `build` fills: the host
// library of its module (doc/host-libraries.md), loaded without Python and
// called through the shim's C ABI as the kernel's "pyccel" implementation.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ck {

/// One parameter as the library's description declares it.
struct HostLibraryParameter {
    std::string name;
    ElementType type = ElementType::float64;
    int rank = 0;  ///< 0: a scalar
    char order = 'A';
};

/// A function of a host library's description; `skip_reason` set for a
/// function the shim gives no entry.
struct HostLibraryFunction {
    std::string name;
    std::vector<HostLibraryParameter> parameters;
    std::string skip_reason;
};

/// Parses a library's description text (host_library_description's format).
/// Throws CacheError naming `where` for a line it cannot read.
std::vector<HostLibraryFunction> parse_host_library_description(const std::string& text, const std::string& where);

/// Whether key inputs `recorded` (a cache manifest's, an in-place record's
/// or a bundle's) name the current digest of the Python source `file`, as
/// the host key reads it. Throws SourceError when `file` cannot be read.
bool records_current_source(const nlohmann::json& recorded, const std::filesystem::path& file);

/// A module's host library as the runtime finds it, with the key and key
/// inputs of the build that made it.
struct HostLibraryFile {
    std::filesystem::path file;
    std::string key;
    nlohmann::json inputs;
    /// An in-place build's library: the SHA-256 its record holds, which the
    /// bytes loaded must have (a cache entry's was checked when found).
    std::string in_place_sha256;
};

/// The host library of `source`'s Pyccel module under the cache root `root`:
/// the latest host entry of its module (EntryStore::latest, as `build`
/// records it) whose recorded source digest is the module's current one, its
/// library's checksum verified; else (no such entry with a library, or no
/// `root`) the library `build --in-place` left beside the module, when its
/// in-place record holds the current source digest and lists it. Nothing
/// when the kernel has no Pyccel module, neither a current entry nor an
/// in-place build, or no library (a build made before libraries); `note`
/// says why when an entry's library differs from its manifest or the entry
/// is damaged (an artifact missing or truncated); `absent` says why there is
/// no current entry (none built, or the source changed since), which is no
/// warning: an application may attach its own host kernel. Edits of
/// modules it imports are not seen here: `build` makes a new entry. Throws
/// SourceError when the module cannot be read, CacheError for a manifest
/// that cannot be.
std::optional<HostLibraryFile> find_host_library(const KernelSource& source,
                                                 const std::optional<std::filesystem::path>& root, std::string* note,
                                                 std::string* absent = nullptr);

/// find_host_library for a kernel of `config` (the cache of its top-level
/// package or `cache-name`, where `build` writes it); when the cache
/// location cannot be worked out, the in-place build alone, and `note` says
/// why when there is none.
std::optional<HostLibraryFile> find_host_library(const KernelSource& source, const Config& config, std::string* note,
                                                 std::string* absent = nullptr);

/// Loads the host library at `file` (dlopen, RTLD_NOW, never unloaded;
/// refused without loading when its ELF headers reach past its end, which
/// dlopen would map and die of SIGBUS on), checks its ABI version and returns kernel `kernel`'s entry as
/// cached_host_kernel does; nothing, with `note` saying why (messages name
/// the library `shown_as`), when it does not load or cannot serve the
/// kernel. Throws CacheError for a description it cannot read.
std::optional<HostKernel> load_host_library_kernel(const std::string& kernel, const std::filesystem::path& file,
                                                   const std::string& shown_as, std::string* note);

/// The bytes of `library`, checked against the SHA-256 an in-place build
/// recorded (a cache entry's library was checked when find_host_library
/// found it). Nothing, with `note` naming the file and what to run, when an
/// in-place library changed since its build. Throws SourceError when the
/// file cannot be read.
std::optional<std::string> read_host_library(const HostLibraryFile& library, std::string* note);

/// load_host_library_kernel of a copy of `bytes` in a memory file (memfd),
/// for libraries whose path the loader may already know with other bytes
/// (a bundle's; an in-place library rebuilt while the process ran: a loaded
/// library stays loaded, and the loader knows it by its path). The memory
/// file of a library that loaded stays open for the process's life, so that
/// its descriptor's number, and so its path, is never given to another.
std::optional<HostKernel> load_host_library_bytes(const std::string& kernel, std::string_view bytes,
                                                  const std::string& shown_as, std::string* note);

/// The kernel's Pyccel version: find_host_library's library, loaded by
/// load_host_library_kernel. The HostKernel converts scalars as
/// convert_scalar does and passes arrays as views, without copies; a wrong
/// element type, rank, layout or a device array is an ArgumentError naming
/// the argument. Nothing, with `note` saying why when there is a reason
/// (a library that cannot serve the kernel, does not load, or cannot be
/// read), `absent` as find_host_library's; never throws.
std::optional<HostKernel> cached_host_kernel(const KernelSource& source, const Config& config, std::string* note,
                                             std::string* absent = nullptr);

/// The end of a host library's file name, `<stem>.ck-host.so`, beside the
/// module's extension in its host entry.
inline constexpr std::string_view host_library_suffix = ".ck-host.so";

/// What cached_host_kernel would say of the host library beside the module's
/// Python extension `extension` (`<stem>.ck-host.so` in the host entry
/// `status` found current for the kernel's module), read from the library's
/// exported description in place: not loaded, its SHA-256 not checked
/// (`cache verify` does), only the pages read that hold the description. For
/// `status`, which asks for every kernel of a tree: loading and hashing
/// Struphy's 126 libraries tripled a warm status. Nothing when there is no
/// library or it has no function of the kernel's name; "" when the kernel's
/// function has an entry point; else why not, in cached_host_kernel's words.
std::optional<std::string> host_library_note(const KernelSource& source, const std::filesystem::path& extension);

}  // namespace ck
