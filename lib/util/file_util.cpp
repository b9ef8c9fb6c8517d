#include "util/file_util.hpp"
#include "util/stale_retry.hpp"

#include "util/atomic_file.hpp"

#include "cunumpy_kernels/error.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace ck::util {

namespace fs = std::filesystem;

UniqueFd::~UniqueFd()
{
    if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept
{
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.release();
    }
    return *this;
}

int UniqueFd::release()
{
    int fd = fd_;
    fd_ = -1;
    return fd;
}

std::string errno_message(int error) { return std::strerror(error); }

std::string read_file(const fs::path& path, std::uint64_t max_bytes)
{
    // Non-blocking: a FIFO put where a file is expected (a shared cache's
    // record, a source) would otherwise hang the run at the open.
    // Each try opens by name: on NFS that looks the path up again, past a
    // handle that another node's replace made stale.
    return read_retrying_stale([&] {
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
        if (!fd.valid()) throw_read_error(path, errno);
        return read_open_file(fd.get(), path, max_bytes);
    });
}

std::optional<std::string> read_record(const fs::path& path)
{
    try {
        return read_file(path);
    } catch (const SourceError&) {
        return std::nullopt;
    } catch (const TransientReadError&) {
        return std::nullopt;
    }
}

std::string read_open_file(int fd, const fs::path& path, std::uint64_t max_bytes)
{
    auto failed = [&](const std::string& why) { return SourceError("cannot read " + path.string() + ": " + why); };
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw_read_error(path, errno);
    if (!S_ISREG(info.st_mode)) throw failed("not a regular file");
    auto too_large = [&] { return failed("larger than " + std::to_string(max_bytes) + " bytes"); };
    if (static_cast<std::uint64_t>(info.st_size) > max_bytes) throw too_large();
    // Read straight into the string, one byte more than the stat says: a
    // read that stops short exactly at the stat's size is the end of the
    // file, and the read that would return 0 is saved (a first call reads
    // four files: bench/RESULTS.md, issue 14). Any other short read goes on.
    const auto size = static_cast<std::size_t>(info.st_size);
    // A size of 0 may be a file of /proc, with content: room for it at once.
    std::string content(size > 0 ? size + 1 : 4096, '\0');
    std::size_t have = 0;
    for (;;) {
        if (have == content.size()) content.resize(std::max<std::size_t>(content.size() * 2, 1 << 16));
        ssize_t n = ::read(fd, content.data() + have, content.size() - have);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw_read_error(path, errno);
        if (n == 0) break;
        have += static_cast<std::size_t>(n);
        if (have > max_bytes) throw too_large();  // grown while read
        if (have == size) break;
    }
    content.resize(have);
    return content;
}

void write_all(int fd, std::string_view bytes, const fs::path& path)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw CacheError("cannot write " + path.string() + ": " + errno_message(errno));
        done += static_cast<std::size_t>(n);
    }
}

namespace {

UniqueFd create_holding(const fs::path& path, std::string_view bytes)
{
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) throw CacheError("cannot create " + path.string() + ": " + errno_message(errno));
    write_all(fd.get(), bytes, path);
    return fd;
}

}  // namespace

void write_file(const fs::path& path, std::string_view bytes) { create_holding(path, bytes); }

void write_file_synced(const fs::path& path, const std::string& bytes)
{
    UniqueFd fd = create_holding(path, bytes);
    if (::fsync(fd.get()) != 0) throw CacheError("cannot sync " + path.string() + ": " + errno_message(errno));
}

void replace_file_atomically(const fs::path& path, const std::string& bytes)
{
    AtomicFile file(path);
    file.write(bytes);
    file.commit();
}

void fsync_dir(const fs::path& dir)
{
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.valid()) ::fsync(fd.get());
}

bool make_writable_dir(const fs::path& dir, std::string* why)
{
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) {
        if (why) *why = error.message();
        return false;
    }
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        if (why) *why = errno_message(errno);
        return false;
    }
    return true;
}

bool could_make_writable_dir(const std::filesystem::path& dir, std::string* why)
{
    std::filesystem::path existing = absolute_normal(dir);
    std::error_code error;
    // A dangling link is there (create_directories fails on it), and not a folder.
    while (std::filesystem::symlink_status(existing, error).type() == std::filesystem::file_type::not_found &&
           existing.has_relative_path())
        existing = existing.parent_path();
    if (!std::filesystem::is_directory(existing, error)) {
        if (why) *why = existing.string() + " is not a folder";
        return false;
    }
    if (::access(existing.c_str(), W_OK | X_OK) != 0) {
        if (why) *why = existing.string() + ": " + errno_message(errno);
        return false;
    }
    return true;
}

fs::path canonical_path(const fs::path& path, std::error_code& error)
{
    error.clear();
    UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (fd.valid()) {
        std::string link = "/proc/self/fd/" + std::to_string(fd.get());
        char buffer[PATH_MAX];
        ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer);
        std::string_view resolved(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
        // Short of the buffer, absolute, and not a file removed meanwhile.
        if (n > 0 && static_cast<std::size_t>(n) < sizeof buffer && resolved.front() == '/' &&
            !resolved.ends_with(" (deleted)"))
            return fs::path(resolved);
    }
    return fs::canonical(path, error);
}

std::filesystem::path absolute_normal(const std::filesystem::path& path)
{
    std::filesystem::path normal = std::filesystem::absolute(path).lexically_normal();
    if (!normal.has_filename() && normal != normal.root_path()) normal = normal.parent_path();
    return normal;
}

std::optional<std::filesystem::path> home_folder()
{
    // Python's expanduser: a HOME set to the empty string is the root folder.
    const char* home = std::getenv("HOME");
    if (home) return std::filesystem::path(*home ? home : "/");
    const passwd* user = ::getpwuid(::getuid());
    if (user && user->pw_dir && *user->pw_dir) return std::filesystem::path(user->pw_dir);
    return std::nullopt;
}

}  // namespace ck::util
