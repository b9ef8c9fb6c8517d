// The record an in-place build leaves beside the files it wrote:
// `<folder>/__pyccel__/<stem>.cunumpy-kernels.json`, holding the key, the key
// inputs, every file written (relative to the module's folder) and the
// extension's size, time and SHA-256. It lets a warm `build --in-place` and
// `status` decide with one read and one stat per module, tells our builds from
// another tool's (Pyccel's own, `struphy compile`), and tells `clean` exactly
// what to remove.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// Bumped whenever the record's fields change meaning.
inline constexpr const char* in_place_record_format = "cunumpy-kernels/in-place/2";

struct InPlaceRecord {
    std::string module;              ///< dotted module name
    std::string key;                 ///< empty while the files are being replaced (an interrupted build)
    nlohmann::json inputs;           ///< the key's inputs, for "what changed"
    std::string extension;           ///< `<stem><EXT_SUFFIX>`, in the module's folder
    std::uintmax_t size = 0;         ///< the extension's size in bytes
    std::int64_t mtime_ns = 0;       ///< its modification time, ns since the epoch
    std::string sha256;              ///< its SHA-256 (hex)
    std::vector<std::string> files;  ///< every file the build wrote, relative to the module's folder
    /// The files of this module itself (its extension, and in `__pyccel__/` its
    /// stub, objects, sources and wrapper), which importers' builds read:
    /// all must exist for a hit. In the first line.
    std::vector<std::string> own_files;
    /// The host library it wrote (`<stem>.ck-host.so`, "" for none), with
    /// its size, time and SHA-256: the runtime loads only these bytes, and a
    /// library changed since (a disk fault, a copy cut short) is rebuilt.
    std::string library;
    std::uintmax_t library_size = 0;
    std::int64_t library_mtime_ns = 0;
    std::string library_sha256;
    std::string built_at;  ///< UTC, ISO 8601
    double seconds = 0;    ///< how long the build took
};

/// `<folder>/__pyccel__/<stem>.cunumpy-kernels.json`.
std::filesystem::path in_place_record_path(const std::filesystem::path& folder, const std::string& stem);

/// The record at `path`, or nothing when there is none or it cannot be read
/// as one (a record of another format counts as none). The file is two lines
/// of JSON: what decides a hit (format, key, extension and its stamp and
/// digest), then the rest (module, inputs, files, time). With `header_only`
/// the second line is not parsed, and `module`, `inputs` and `files` stay
/// empty: a warm build reads 149 records.
std::optional<InPlaceRecord> read_in_place_record(const std::filesystem::path& path, bool header_only = false);

/// Replaces the record at `path` atomically. Throws CacheError.
void write_in_place_record(const std::filesystem::path& path, const InPlaceRecord& record);

/// A file's size and modification time, as records keep them.
struct FileStamp {
    std::uintmax_t size = 0;
    std::int64_t mtime_ns = 0;
};

/// The stamp of `path`, or nothing when it is not a regular file.
std::optional<FileStamp> file_stamp(const std::filesystem::path& path);

/// Whether the extension the record names, in `folder`, is still the one it
/// describes: same size and time, or same SHA-256 (a copy that kept the bytes).
bool record_describes_extension(const InPlaceRecord& record, const std::filesystem::path& folder);

/// Whether the host library the record names, in `folder`, is still the one
/// it wrote: same size and time, or same SHA-256. True when it names none.
bool record_describes_library(const InPlaceRecord& record, const std::filesystem::path& folder);

/// How the extension beside a module stands against its current key.
struct InPlaceState {
    enum class Kind {
        current,     ///< our record names the current key, and the extension is the one it describes
        stale,       ///< our record names another key, or an interrupted build
        incomplete,  ///< our record names the key, but one of its own files is gone (`missing_file`)
        damaged,     ///< our record names the key, but its host library is not the one it describes
        missing,     ///< no extension
        foreign,     ///< an extension this tool has no record of: another tool built it, or replaced ours
    } kind = Kind::missing;
    /// foreign: the extension is older than the module's source or one it
    /// imports (make's rule, as `struphy compile` and Pyccel judge it).
    bool older_than_sources = false;
    std::optional<InPlaceRecord> record;  ///< ours, when there is one
    std::string missing_file;             ///< incomplete: the first own file not found
};

/// Reads the record and stats the extension of the module `stem` in
/// `folder`; `sources` are the module's file and every file it imports,
/// directly or not (compared by time only for foreign extensions). A
/// record whose stamp differs from the extension's is still ours when the
/// extension's SHA-256 matches (a copy that kept the bytes).
InPlaceState read_in_place_state(const std::filesystem::path& folder, const std::string& stem,
                                 const std::string& ext_suffix, const std::string& key,
                                 const std::vector<std::filesystem::path>& sources);

}  // namespace ck
