// Small file helpers with errors that name the path and the OS's reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ck::util {

/// Owns a file descriptor; closes it once.
class UniqueFd {
public:
    explicit UniqueFd(int fd = -1) : fd_(fd) {}
    ~UniqueFd();
    UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    int release();

private:
    int fd_;
};

/// The whole file. Throws SourceError "cannot read PATH: REASON", also for
/// what is not a regular file (a FIFO, a device, a folder: never waited
/// on) and for a file larger than `max_bytes`. A read that fails with ESTALE
/// (another node replaced the file) is tried again as util::StaleRetry says,
/// then throws TransientReadError.
std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes = UINT64_MAX);

/// A best-effort record: a memo its reader can work out again (a tool's
/// probe answer, the key a module had last). Its text, or none when it is
/// missing, unreadable or still stale after read_file's tries: another node
/// may be replacing or removing it, and a record that cannot be read costs
/// a recomputation, never a failed command (issue 45).
std::optional<std::string> read_record(const std::filesystem::path& path);

/// read_file of a file already open as `fd` (read from its current offset);
/// `path` names it in errors. Throws as read_file, but tries nothing again
/// (the caller holds the handle): TransientReadError at the first ESTALE.
std::string read_open_file(int fd, const std::filesystem::path& path, std::uint64_t max_bytes = UINT64_MAX);

/// Writes all of `bytes` to `fd` (retrying short writes and EINTR). Throws
/// CacheError "cannot write PATH: REASON", `path` naming the file.
void write_all(int fd, std::string_view bytes, const std::filesystem::path& path);

/// Writes `bytes` to a new file (or over an old one), unsynced: for a
/// compiler's scratch input, which no crash needs to find. Throws
/// CacheError naming the path.
void write_file(const std::filesystem::path& path, std::string_view bytes);

/// Writes `bytes` to a new file and fsyncs it. Throws CacheError naming the path.
void write_file_synced(const std::filesystem::path& path, const std::string& bytes);

/// Writes `bytes` to `path` through a temporary file and a rename, so readers
/// see the old or the new content. Throws CacheError naming the path.
void replace_file_atomically(const std::filesystem::path& path, const std::string& bytes);

/// fsyncs a folder so that renames inside it survive a crash. Best effort.
void fsync_dir(const std::filesystem::path& dir);

/// strerror(errno) as a string.
std::string errno_message(int error);

/// Whether the current user may create files in `dir` (creating it if needed).
bool make_writable_dir(const std::filesystem::path& dir, std::string* why);

/// Whether make_writable_dir(dir) would succeed, found without creating
/// anything: `dir` is a folder the current user may write and search, or
/// the nearest folder above it that exists is one (access(2), as
/// make_writable_dir checks). `why` names the path that fails and the reason.
bool could_make_writable_dir(const std::filesystem::path& dir, std::string* why);

/// `path` made absolute against the working folder and lexically normal
/// (no `.`, no `x/..`, no trailing slash): the form of every root the tool
/// uses and prints. Reads nothing but the working folder.
std::filesystem::path absolute_normal(const std::filesystem::path& path);

/// std::filesystem::canonical(path, error) for fewer system calls: the
/// kernel resolves the path once (an O_PATH open, then the /proc/self/fd
/// link), where realpath reads a link per component, nine calls for a
/// header in a first call (bench/RESULTS.md, issue 14). The same answer
/// but on a case-insensitive file system, where the kernel may spell a name
/// as stored rather than as asked; the tool resolves through this function
/// alone, so its answers agree with each other. Falls back to
/// std::filesystem::canonical without /proc and for every error: `error`
/// is set as that sets it.
std::filesystem::path canonical_path(const std::filesystem::path& path, std::error_code& error);

/// The user's home folder as Python's Path.home() finds it: `HOME` when set
/// (`/` when set but empty, as os.path.expanduser gives it), else the password
/// database's entry for this user. Nothing when neither gives a folder.
std::optional<std::filesystem::path> home_folder();

}  // namespace ck::util
