#include "util/file_util.hpp"

#include "util/atomic_file.hpp"

#include "cunumpy_kernels/error.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
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

std::string errno_message(int error)
{
    return std::strerror(error);
}

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SourceError("cannot read " + path.string() + ": " + errno_message(errno));
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad()) throw SourceError("cannot read " + path.string() + ": " + errno_message(errno));
    return content.str();
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

void write_file_synced(const fs::path& path, const std::string& bytes)
{
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) throw CacheError("cannot create " + path.string() + ": " + errno_message(errno));
    write_all(fd.get(), bytes, path);
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
