#include "compilers/compiler_scratch.hpp"

#include "util/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/signal_paths.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ck {

namespace fs = std::filesystem;

namespace {

// The scratch folders of this process, for the signal handler. With more
// folders alive than slots (--jobs above 64), the rest are left to their
// destructor or a later build.
util::SignalPaths scratch_folders;
// Set by the sweep: the process is about to die of its signal, and a worker
// thread starting its next job must not leave a folder behind it.
std::atomic<bool> swept{false};

// Removes `name` in the folder `parent_fd` and everything below it, with
// system calls only (getdents64, unlinkat): it runs in a signal handler. A
// folder is read again when a dying compiler added a file meanwhile.
void remove_tree_at(int parent_fd, const char* name, int depth)
{
    if (::unlinkat(parent_fd, name, 0) == 0 || errno != EISDIR || depth > 16) return;
    int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    for (int pass = 0; pass < 3; ++pass) {
        alignas(dirent64) char buffer[2048];
        ::lseek(fd, 0, SEEK_SET);
        for (ssize_t n; (n = ::getdents64(fd, buffer, sizeof buffer)) > 0;) {
            for (ssize_t at = 0; at < n;) {
                const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
                at += entry->d_reclen;
                if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0)
                    remove_tree_at(fd, entry->d_name, depth + 1);
            }
        }
        if (::unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY) break;
    }
    ::close(fd);
}

}  // namespace

fs::path scratch_parent()
{
    const char* tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? fs::path(tmp) : fs::path("/tmp");
}

CompilerScratch::CompilerScratch()
{
    path_ = scratch_parent() / (compiler_scratch_prefix + unique_temporary_name());
    // Registered before it exists and checked after: a sweep that runs in
    // between either removes the folder or is seen here.
    slot_ = scratch_folders.add(path_);
    std::string why;
    try {
        folder_.emplace(path_);
        if (swept.load())
            why = util::errno_message(EINTR);
        else if (::mkdir(tmp().c_str(), 0700) != 0)
            why = util::errno_message(errno);
    } catch (const CacheError& error) {
        why = error.what();
    }
    if (!why.empty()) {
        folder_.reset();
        scratch_folders.remove(slot_);
        throw ToolchainError("cannot create the compiler's scratch folder " + path_.string() + ": " + why +
                             "; set TMPDIR to a writable folder");
    }
}

CompilerScratch::~CompilerScratch()
{
    folder_.reset();
    scratch_folders.remove(slot_);
}

void remove_compiler_scratch_folders() noexcept
{
    swept.store(true);
    scratch_folders.for_each([](const char* path, const char*) { remove_tree_at(AT_FDCWD, path, 0); });
}

int remove_stale_compiler_scratch(const fs::path& parent, double max_age_seconds)
{
    const std::string prefix = compiler_scratch_prefix;
    int removed = 0;
    std::error_code error;
    for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
        std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        if (!is_stale_temporary(it->path(), name.substr(prefix.size()), max_age_seconds)) continue;
        std::error_code ignored;
        if (fs::remove_all(it->path(), ignored) > 0) ++removed;
    }
    return removed;
}

}  // namespace ck
