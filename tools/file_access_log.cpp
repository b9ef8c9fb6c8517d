// The C library's entry points are defined here under their own names, so
// this file is built without large-file renaming (stat and stat64 are then
// two functions, as the C library exports them) and without fortification
// (whose inline wrappers would clash with these definitions).
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE

#include "file_access_log.hpp"

#include "util/bookkeeping_access.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pwd.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdarg>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace fs = std::filesystem;

namespace ck::cli {

struct FileAccessLog::Log {
    std::mutex mutex;
    std::string cwd;
    std::unordered_map<std::string, std::size_t> index;
    FileAccesses accesses;
    std::unordered_set<std::string> environment_seen;
    std::unordered_set<std::string> written;
    int libraries_at_open = 0;

    void note_path(int dirfd, const char* path, bool listed);
    void note_write(int dirfd, const char* path);
    void note_written(const std::string& absolute);
    bool witnessable(const std::string& absolute);
    void note_permission(int dirfd, const char* path, int mode, int flags);
    void note_environment(const char* name, const char* value);
    void note_incomplete(const char* why);
};

namespace {

std::atomic<FileAccessLog::Log*> open_log{nullptr};

// The C library's definition of `name`, the one after this executable's.
template <typename Function>
Function next_definition(const char* name)
{
    return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

#define CK_REAL(name) static const auto real = ck::cli::next_definition<decltype(&::name)>(#name)

// What a path under /proc, /sys or /dev is to the log: the process's own
// pseudo-files (its descriptors' links, its executable, the CPU count,
// /dev/null) are no witnesses, they differ in every process; a file system
// mounted under /dev (a tmpfs at /dev/shm or anywhere else there) holds files
// like any other folder; a path that goes on through one of /proc's links to
// a folder (a process's cwd, root or open folder) leads somewhere no witness
// can name.
enum class PathKind { witness, volatile_file, through_proc_link };

// Whether `path` (or, when it does not exist, the nearest folder above it
// that does) lies on another file system than /dev itself.
bool mounted_under_dev(std::string_view path)
{
    static const auto real_lstat = next_definition<decltype(&::lstat)>("lstat");
    struct stat dev {}, here {};
    if (real_lstat("/dev", &dev) != 0) return false;
    std::string at(path);
    while (at.size() > 4 && real_lstat(at.c_str(), &here) != 0) at.erase(at.rfind('/'));
    return at.size() > 4 && here.st_dev != dev.st_dev;
}

PathKind path_kind(std::string_view path)
{
    auto under = [&](std::string_view root) {
        return path.substr(0, root.size()) == root && (path.size() == root.size() || path[root.size()] == '/');
    };
    if (under("/proc")) {
        // /proc/<process>/<link>[/<fd>]/more
        std::size_t process_end = path.find('/', 6);
        if (process_end == std::string_view::npos) return PathKind::volatile_file;
        std::string_view rest = path.substr(process_end + 1);
        for (std::string_view link : {"cwd/", "root/"})
            if (rest.substr(0, link.size()) == link) return PathKind::through_proc_link;
        for (std::string_view folder : {"fd/", "map_files/"})
            if (rest.substr(0, folder.size()) == folder && rest.find('/', folder.size()) != std::string_view::npos)
                return PathKind::through_proc_link;
        return PathKind::volatile_file;
    }
    // /dev/shm by name too: in a container it may share /dev's file system.
    if (under("/dev/shm") || under("/dev/mqueue")) return PathKind::witness;
    if (under("/dev")) return mounted_under_dev(path) ? PathKind::witness : PathKind::volatile_file;
    return under("/sys") ? PathKind::volatile_file : PathKind::witness;
}

// Whether this access is one to log: a log is open and the access is not a
// memo's own.
FileAccessLog::Log* logging()
{
    FileAccessLog::Log* log = open_log.load(std::memory_order_acquire);
    return log && !util::BookkeepingFileAccess::active() ? log : nullptr;
}

void note_path(int dirfd, const char* path, bool listed)
{
    if (auto* log = logging(); log && path) log->note_path(dirfd, path, listed);
}

void note_incomplete(const char* why)
{
    if (auto* log = logging()) log->note_incomplete(why);
}

// A permission asked, and the path it was asked of.
void note_permission(int dirfd, const char* path, int mode, int flags)
{
    if (auto* log = logging(); log && path) {
        log->note_path(dirfd, path, false);
        log->note_permission(dirfd, path, mode, flags);
    }
}

bool listing(int flags)
{
    return (flags & O_PATH) == 0;  // a folder opened for anything but its name may be read
}

// A path the plan creates, changes, renames or removes.
void note_write(int dirfd, const char* path)
{
    if (auto* log = logging(); log && path) log->note_write(dirfd, path);
}

// The path an open descriptor names, as the kernel keeps it; empty when it
// cannot be read.
std::string handle_path(int fd)
{
    static const auto real_readlink = next_definition<decltype(&::readlink)>("readlink");
    char target[PATH_MAX];
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = real_readlink(link.c_str(), target, sizeof target);
    return n > 0 && n < static_cast<ssize_t>(sizeof target) ? std::string(target, static_cast<std::size_t>(n)) : "";
}

// A file changed through a handle (fchmod, ftruncate, futimens).
void note_write_handle(int fd)
{
    if (auto* log = logging()) {
        std::string name = handle_path(fd);
        log->note_written(name.empty() ? "an open file (descriptor " + std::to_string(fd) + ")" : name);
    }
}

bool opens_to_write(int flags)
{
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND)) != 0 ||
           (flags & O_TMPFILE) == O_TMPFILE;
}

void note_open(int dirfd, const char* path, int flags)
{
    note_path(dirfd, path, listing(flags));
    if (opens_to_write(flags)) note_write(dirfd, path);
}

bool fopens_to_write(const char* mode)
{
    return mode && std::strpbrk(mode, "wa+") != nullptr;
}

int count_libraries()
{
    int count = 0;
    ::dl_iterate_phdr([](dl_phdr_info*, std::size_t, void* n) { return ++*static_cast<int*>(n), 0; }, &count);
    return count;
}

char* environment_value(const char* name)
{
    if (!name || !environ) return nullptr;
    std::size_t length = std::strlen(name);
    if (length == 0 || std::strchr(name, '=')) return nullptr;
    for (char** entry = environ; *entry; ++entry)
        if (std::strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
    return nullptr;
}

}  // namespace

namespace {

// `path` made absolute; empty when it cannot be (noted as incomplete).
std::string absolute_path(FileAccessLog::Log& log, int dirfd, const char* path)
{
    if (*path == '/') return path;
    if (dirfd == AT_FDCWD) return log.cwd + "/" + path;
    if (std::string folder = handle_path(dirfd); !folder.empty() && folder[0] == '/') return folder + "/" + path;
    log.note_incomplete("a path relative to a folder handle");
    return "";
}

}  // namespace

// Whether `absolute` is a path to log (path_kind).
bool FileAccessLog::Log::witnessable(const std::string& absolute)
{
    if (absolute.empty()) return false;
    switch (path_kind(absolute)) {
    case PathKind::witness:
        return true;
    case PathKind::volatile_file:
        return false;
    case PathKind::through_proc_link:
        note_incomplete("a path through a link of /proc (a process's working folder, root or open folder)");
        return false;
    }
    return false;
}

void FileAccessLog::Log::note_path(int dirfd, const char* path, bool listed)
{
    if (!*path) return;  // fstatat(fd, "", AT_EMPTY_PATH): the file an earlier open named
    std::string absolute = absolute_path(*this, dirfd, path);
    if (!witnessable(absolute)) return;
    std::lock_guard lock(mutex);
    auto [it, added] = index.try_emplace(absolute, accesses.paths.size());
    if (added) accesses.paths.push_back({absolute, listed});
    accesses.paths[it->second].listed |= listed;
}

void FileAccessLog::Log::note_write(int dirfd, const char* path)
{
    if (*path) note_written(absolute_path(*this, dirfd, path));
}

void FileAccessLog::Log::note_written(const std::string& absolute)
{
    if (!witnessable(absolute)) return;
    std::lock_guard lock(mutex);
    if (written.insert(absolute).second && accesses.written.empty()) accesses.written = absolute;
}

void FileAccessLog::Log::note_permission(int dirfd, const char* path, int mode, int flags)
{
    if (!*path) return;
    std::string absolute = absolute_path(*this, dirfd, path);
    if (!witnessable(absolute)) return;
    FileAccesses::PermissionCheck check{absolute, mode, flags};
    std::lock_guard lock(mutex);
    auto& checks = accesses.permission_checks;
    if (std::find(checks.begin(), checks.end(), check) == checks.end()) checks.push_back(std::move(check));
}

void FileAccessLog::Log::note_environment(const char* name, const char* value)
{
    std::lock_guard lock(mutex);
    if (!environment_seen.insert(name).second) return;
    accesses.environment.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
}

void FileAccessLog::Log::note_incomplete(const char* why)
{
    std::lock_guard lock(mutex);
    if (accesses.incomplete.empty()) accesses.incomplete = why;
}

namespace {

// What the planner asks through libstdc++, each of a path of its own: the
// log must see every one, or it cannot vouch for a plan.
struct Canary {
    const char* call;
    void (*ask)(const std::string& path);
};

const Canary canaries[] = {
    {"std::filesystem::status", [](const std::string& p) { std::error_code e; (void)fs::status(p, e); }},
    {"std::filesystem::symlink_status", [](const std::string& p) { std::error_code e; (void)fs::symlink_status(p, e); }},
    {"std::filesystem::directory_iterator", [](const std::string& p) { std::error_code e; fs::directory_iterator it(p, e); }},
    {"std::filesystem::canonical", [](const std::string& p) { std::error_code e; (void)fs::canonical(p, e); }},
    {"std::filesystem::read_symlink", [](const std::string& p) { std::error_code e; (void)fs::read_symlink(p, e); }},
    {"std::ifstream", [](const std::string& p) { std::ifstream in(p); }},
    {"std::getenv", [](const std::string& p) { (void)std::getenv(p.c_str()); }},
};

// What the planner may change through libstdc++: each must be seen as a
// write. The paths lie in a folder that does not exist, so every call fails.
const Canary write_canaries[] = {
    {"std::ofstream", [](const std::string& p) { std::ofstream out(p); }},
    {"std::filesystem::create_directory", [](const std::string& p) { std::error_code e; fs::create_directory(p, e); }},
    {"std::filesystem::rename", [](const std::string& p) { std::error_code e; fs::rename(p + "-from", p, e); }},
    {"std::filesystem::remove", [](const std::string& p) { std::error_code e; fs::remove(p, e); }},
    {"std::filesystem::permissions", [](const std::string& p) { std::error_code e; fs::permissions(p, fs::perms::owner_all, e); }},
    {"std::filesystem::last_write_time", [](const std::string& p) { std::error_code e; fs::last_write_time(p, fs::file_time_type::clock::now(), e); }},
    {"std::filesystem::resize_file", [](const std::string& p) { std::error_code e; fs::resize_file(p, 0, e); }},
    {"std::filesystem::create_symlink", [](const std::string& p) { std::error_code e; fs::create_symlink("x", p, e); }},
    {"std::filesystem::create_hard_link", [](const std::string& p) { std::error_code e; fs::create_hard_link(p + "-from", p, e); }},
};

// Runs the canaries inside the open log, then takes their traces out of it.
std::string unseen_canary(FileAccessLog::Log& log)
{
    const std::string root = "/.cunumpy-kernels-canary-" + std::to_string(::getpid());
    auto read_path = [&](std::size_t i) { return root + std::to_string(i); };
    auto write_path = [&](std::size_t i) { return root + "/w" + std::to_string(i); };
    for (std::size_t i = 0; i < std::size(canaries); ++i) canaries[i].ask(read_path(i));
    for (std::size_t i = 0; i < std::size(write_canaries); ++i) write_canaries[i].ask(write_path(i));
    std::lock_guard lock(log.mutex);
    std::string unseen;
    for (std::size_t i = 0; i < std::size(canaries) && unseen.empty(); ++i)
        if (!log.index.count(read_path(i)) && !log.environment_seen.count(read_path(i))) unseen = canaries[i].call;
    for (std::size_t i = 0; i < std::size(write_canaries) && unseen.empty(); ++i)
        if (!log.written.count(write_path(i))) unseen = write_canaries[i].call;
    auto canary = [&](const std::string& path) { return path.rfind(root, 0) == 0; };
    auto& paths = log.accesses.paths;
    std::erase_if(paths, [&](const FileAccesses::Path& p) { return canary(p.path); });
    std::erase_if(log.accesses.environment, [&](const auto& v) { return canary(v.first); });
    std::erase_if(log.accesses.permission_checks, [&](const auto& c) { return canary(c.path); });
    std::erase_if(log.written, canary);
    std::erase_if(log.environment_seen, canary);
    if (canary(log.accesses.written)) log.accesses.written.clear();
    log.index.clear();
    for (std::size_t i = 0; i < paths.size(); ++i) log.index.emplace(paths[i].path, i);
    return unseen;
}

}  // namespace

FileAccessLog::FileAccessLog() : log_(std::make_unique<Log>())
{
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd)) log_->cwd = cwd;
    else log_->accesses.incomplete = "the working folder cannot be named";
    log_->libraries_at_open = count_libraries();
    Log* none = nullptr;
    if (!open_log.compare_exchange_strong(none, log_.get())) throw std::logic_error("a file access log is open already");
    if (std::string unseen = unseen_canary(*log_); !unseen.empty())
        log_->note_incomplete(("the file calls of " + unseen + " do not reach the log").c_str());
}

FileAccessLog::~FileAccessLog()
{
    Log* mine = log_.get();
    open_log.compare_exchange_strong(mine, nullptr);
}

FileAccesses FileAccessLog::finish()
{
    Log* mine = log_.get();
    open_log.compare_exchange_strong(mine, nullptr);
    std::lock_guard lock(log_->mutex);  // waits for a call logging now
    if (count_libraries() != log_->libraries_at_open && log_->accesses.incomplete.empty())
        log_->accesses.incomplete = "a library was loaded";
    return std::move(log_->accesses);
}

}  // namespace ck::cli

// The entry points. Each logs what it is asked, then does what the C
// library does.
using ck::cli::note_incomplete;
using ck::cli::note_open;
using ck::cli::note_write;
using ck::cli::note_write_handle;
using ck::cli::note_path;
using ck::cli::note_permission;

extern "C" {

int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);

int stat(const char* path, struct stat* buf) __THROW
{
    CK_REAL(stat);
    note_path(AT_FDCWD, path, false);
    return real(path, buf);
}

int stat64(const char* path, struct stat64* buf) __THROW
{
    CK_REAL(stat64);
    note_path(AT_FDCWD, path, false);
    return real(path, buf);
}

int lstat(const char* path, struct stat* buf) __THROW
{
    CK_REAL(lstat);
    note_path(AT_FDCWD, path, false);
    return real(path, buf);
}

int lstat64(const char* path, struct stat64* buf) __THROW
{
    CK_REAL(lstat64);
    note_path(AT_FDCWD, path, false);
    return real(path, buf);
}

int fstatat(int dirfd, const char* path, struct stat* buf, int flags) __THROW
{
    CK_REAL(fstatat);
    note_path(dirfd, path, false);
    return real(dirfd, path, buf, flags);
}

int fstatat64(int dirfd, const char* path, struct stat64* buf, int flags) __THROW
{
    CK_REAL(fstatat64);
    note_path(dirfd, path, false);
    return real(dirfd, path, buf, flags);
}

int statx(int dirfd, const char* path, int flags, unsigned int mask, struct statx* buf) __THROW
{
    CK_REAL(statx);
    note_path(dirfd, path, false);
    return real(dirfd, path, flags, mask, buf);
}

// open's mode is there only when the flags create a file.
static mode_t mode_argument(int flags, va_list arguments)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(arguments, int)) : 0;
}

int open(const char* path, int flags, ...)
{
    CK_REAL(open);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    note_open(AT_FDCWD, path, flags);
    return real(path, flags, mode);
}

int open64(const char* path, int flags, ...)
{
    CK_REAL(open64);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    note_open(AT_FDCWD, path, flags);
    return real(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...)
{
    CK_REAL(openat);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    note_open(dirfd, path, flags);
    return real(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...)
{
    CK_REAL(openat64);
    va_list arguments;
    va_start(arguments, flags);
    mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    note_open(dirfd, path, flags);
    return real(dirfd, path, flags, mode);
}

int __open_2(const char* path, int flags)
{
    static const auto real = ck::cli::next_definition<int (*)(const char*, int)>("__open_2");
    note_open(AT_FDCWD, path, flags);
    return real(path, flags);
}

int __open64_2(const char* path, int flags)
{
    static const auto real = ck::cli::next_definition<int (*)(const char*, int)>("__open64_2");
    note_open(AT_FDCWD, path, flags);
    return real(path, flags);
}

int __openat_2(int dirfd, const char* path, int flags)
{
    static const auto real = ck::cli::next_definition<int (*)(int, const char*, int)>("__openat_2");
    note_open(dirfd, path, flags);
    return real(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char* path, int flags)
{
    static const auto real = ck::cli::next_definition<int (*)(int, const char*, int)>("__openat64_2");
    note_open(dirfd, path, flags);
    return real(dirfd, path, flags);
}

FILE* fopen(const char* path, const char* mode)
{
    CK_REAL(fopen);
    note_path(AT_FDCWD, path, true);
    if (ck::cli::fopens_to_write(mode)) note_write(AT_FDCWD, path);
    return real(path, mode);
}

FILE* fopen64(const char* path, const char* mode)
{
    CK_REAL(fopen64);
    note_path(AT_FDCWD, path, true);
    if (ck::cli::fopens_to_write(mode)) note_write(AT_FDCWD, path);
    return real(path, mode);
}

DIR* opendir(const char* path)
{
    CK_REAL(opendir);
    note_path(AT_FDCWD, path, true);
    return real(path);
}

int access(const char* path, int how) __THROW
{
    CK_REAL(access);
    note_permission(AT_FDCWD, path, how, 0);
    return real(path, how);
}

int faccessat(int dirfd, const char* path, int how, int flags) __THROW
{
    CK_REAL(faccessat);
    note_permission(dirfd, path, how, flags);
    return real(dirfd, path, how, flags);
}

int euidaccess(const char* path, int how) __THROW
{
    CK_REAL(euidaccess);
    note_permission(AT_FDCWD, path, how, AT_EACCESS);
    return real(path, how);
}

ssize_t readlink(const char* path, char* buf, size_t size) __THROW
{
    CK_REAL(readlink);
    note_path(AT_FDCWD, path, false);
    return real(path, buf, size);
}

ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) __THROW
{
    CK_REAL(readlinkat);
    note_path(dirfd, path, false);
    return real(dirfd, path, buf, size);
}

char* realpath(const char* path, char* resolved) __THROW
{
    CK_REAL(realpath);
    note_path(AT_FDCWD, path, false);
    return real(path, resolved);
}

char* canonicalize_file_name(const char* path) __THROW
{
    CK_REAL(canonicalize_file_name);
    note_path(AT_FDCWD, path, false);
    return real(path);
}

// What changes the file system. An answer whose plan wrote is not kept, so
// these only log, and only the path written.
int creat(const char* path, mode_t mode)
{
    CK_REAL(creat);
    note_path(AT_FDCWD, path, false);
    note_write(AT_FDCWD, path);
    return real(path, mode);
}

int creat64(const char* path, mode_t mode)
{
    CK_REAL(creat64);
    note_path(AT_FDCWD, path, false);
    note_write(AT_FDCWD, path);
    return real(path, mode);
}

int mkdir(const char* path, mode_t mode) __THROW
{
    CK_REAL(mkdir);
    note_write(AT_FDCWD, path);
    return real(path, mode);
}

int mkdirat(int dirfd, const char* path, mode_t mode) __THROW
{
    CK_REAL(mkdirat);
    note_write(dirfd, path);
    return real(dirfd, path, mode);
}

int rename(const char* from, const char* to) __THROW
{
    CK_REAL(rename);
    note_write(AT_FDCWD, from);
    note_write(AT_FDCWD, to);
    return real(from, to);
}

int renameat(int from_dirfd, const char* from, int to_dirfd, const char* to) __THROW
{
    CK_REAL(renameat);
    note_write(from_dirfd, from);
    note_write(to_dirfd, to);
    return real(from_dirfd, from, to_dirfd, to);
}

int renameat2(int from_dirfd, const char* from, int to_dirfd, const char* to, unsigned int flags) __THROW
{
    CK_REAL(renameat2);
    note_write(from_dirfd, from);
    note_write(to_dirfd, to);
    return real(from_dirfd, from, to_dirfd, to, flags);
}

int unlink(const char* path) __THROW
{
    CK_REAL(unlink);
    note_write(AT_FDCWD, path);
    return real(path);
}

int unlinkat(int dirfd, const char* path, int flags) __THROW
{
    CK_REAL(unlinkat);
    note_write(dirfd, path);
    return real(dirfd, path, flags);
}

int rmdir(const char* path) __THROW
{
    CK_REAL(rmdir);
    note_write(AT_FDCWD, path);
    return real(path);
}

int remove(const char* path) __THROW
{
    CK_REAL(remove);
    note_write(AT_FDCWD, path);
    return real(path);
}

int link(const char* from, const char* to) __THROW
{
    CK_REAL(link);
    note_write(AT_FDCWD, to);
    return real(from, to);
}

int linkat(int from_dirfd, const char* from, int to_dirfd, const char* to, int flags) __THROW
{
    CK_REAL(linkat);
    note_write(to_dirfd, to);
    return real(from_dirfd, from, to_dirfd, to, flags);
}

int symlink(const char* target, const char* path) __THROW
{
    CK_REAL(symlink);
    note_write(AT_FDCWD, path);
    return real(target, path);
}

int symlinkat(const char* target, int dirfd, const char* path) __THROW
{
    CK_REAL(symlinkat);
    note_write(dirfd, path);
    return real(target, dirfd, path);
}

int chmod(const char* path, mode_t mode) __THROW
{
    CK_REAL(chmod);
    note_write(AT_FDCWD, path);
    return real(path, mode);
}

int fchmod(int fd, mode_t mode) __THROW
{
    CK_REAL(fchmod);
    note_write_handle(fd);
    return real(fd, mode);
}

int fchmodat(int dirfd, const char* path, mode_t mode, int flags) __THROW
{
    CK_REAL(fchmodat);
    note_write(dirfd, path);
    return real(dirfd, path, mode, flags);
}

int chown(const char* path, uid_t owner, gid_t group) __THROW
{
    CK_REAL(chown);
    note_write(AT_FDCWD, path);
    return real(path, owner, group);
}

int lchown(const char* path, uid_t owner, gid_t group) __THROW
{
    CK_REAL(lchown);
    note_write(AT_FDCWD, path);
    return real(path, owner, group);
}

int fchown(int fd, uid_t owner, gid_t group) __THROW
{
    CK_REAL(fchown);
    note_write_handle(fd);
    return real(fd, owner, group);
}

int fchownat(int dirfd, const char* path, uid_t owner, gid_t group, int flags) __THROW
{
    CK_REAL(fchownat);
    note_write(dirfd, path);
    return real(dirfd, path, owner, group, flags);
}

int truncate(const char* path, off_t length) __THROW
{
    CK_REAL(truncate);
    note_write(AT_FDCWD, path);
    return real(path, length);
}

int truncate64(const char* path, off64_t length) __THROW
{
    CK_REAL(truncate64);
    note_write(AT_FDCWD, path);
    return real(path, length);
}

int ftruncate(int fd, off_t length) __THROW
{
    CK_REAL(ftruncate);
    note_write_handle(fd);
    return real(fd, length);
}

int ftruncate64(int fd, off64_t length) __THROW
{
    CK_REAL(ftruncate64);
    note_write_handle(fd);
    return real(fd, length);
}

int utimensat(int dirfd, const char* path, const struct timespec times[2], int flags) __THROW
{
    CK_REAL(utimensat);
    note_write(dirfd, path);
    return real(dirfd, path, times, flags);
}

int futimens(int fd, const struct timespec times[2]) __THROW
{
    CK_REAL(futimens);
    note_write_handle(fd);
    return real(fd, times);
}

int utime(const char* path, const struct utimbuf* times) __THROW
{
    CK_REAL(utime);
    note_write(AT_FDCWD, path);
    return real(path, times);
}

int utimes(const char* path, const struct timeval times[2]) __THROW
{
    CK_REAL(utimes);
    note_write(AT_FDCWD, path);
    return real(path, times);
}

// The C library opens these files by calls of its own that bypass open().
int mkstemp(char* pattern)
{
    CK_REAL(mkstemp);
    int fd = real(pattern);
    note_write(AT_FDCWD, pattern);
    return fd;
}

int mkstemp64(char* pattern)
{
    CK_REAL(mkstemp64);
    int fd = real(pattern);
    note_write(AT_FDCWD, pattern);
    return fd;
}

int mkostemp(char* pattern, int flags)
{
    CK_REAL(mkostemp);
    int fd = real(pattern, flags);
    note_write(AT_FDCWD, pattern);
    return fd;
}

int mkostemps(char* pattern, int suffix_length, int flags)
{
    CK_REAL(mkostemps);
    int fd = real(pattern, suffix_length, flags);
    note_write(AT_FDCWD, pattern);
    return fd;
}

char* mkdtemp(char* pattern) __THROW
{
    CK_REAL(mkdtemp);
    char* made = real(pattern);
    note_write(AT_FDCWD, pattern);
    return made;
}

FILE* tmpfile()
{
    CK_REAL(tmpfile);
    note_write(AT_FDCWD, "/tmp");
    return real();
}

FILE* tmpfile64()
{
    CK_REAL(tmpfile64);
    note_write(AT_FDCWD, "/tmp");
    return real();
}

// Read from `environ` as the C library reads it, never through dlsym: the
// allocator asks for its settings before anything else is ready.
char* getenv(const char* name) __THROW
{
    char* value = ck::cli::environment_value(name);
    if (auto* log = ck::cli::logging()) log->note_environment(name, value);
    return value;
}

char* secure_getenv(const char* name) __THROW
{
    return ::getauxval(AT_SECURE) ? nullptr : getenv(name);
}

// What the log cannot follow: another process's reads, the working folder
// moving under relative paths, the password database (read by the C
// library's own calls).
int chdir(const char* path) __THROW
{
    CK_REAL(chdir);
    note_incomplete("the working folder changed");
    return real(path);
}

int fchdir(int fd) __THROW
{
    CK_REAL(fchdir);
    note_incomplete("the working folder changed");
    return real(fd);
}

int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attributes,
                char* const argv[], char* const envp[])
{
    CK_REAL(posix_spawn);
    note_incomplete("a process was started");
    return real(pid, path, actions, attributes, argv, envp);
}

int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attributes,
                 char* const argv[], char* const envp[])
{
    CK_REAL(posix_spawnp);
    note_incomplete("a process was started");
    return real(pid, file, actions, attributes, argv, envp);
}

pid_t fork() __THROWNL
{
    CK_REAL(fork);
    note_incomplete("a process was started");
    return real();
}

int execve(const char* path, char* const argv[], char* const envp[]) __THROW
{
    CK_REAL(execve);
    note_incomplete("a process was started");
    return real(path, argv, envp);
}

int execv(const char* path, char* const argv[]) __THROW
{
    CK_REAL(execv);
    note_incomplete("a process was started");
    return real(path, argv);
}

int execvp(const char* file, char* const argv[]) __THROW
{
    CK_REAL(execvp);
    note_incomplete("a process was started");
    return real(file, argv);
}

int system(const char* command)
{
    CK_REAL(system);
    note_incomplete("a process was started");
    return real(command);
}

FILE* popen(const char* command, const char* mode)
{
    CK_REAL(popen);
    note_incomplete("a process was started");
    return real(command, mode);
}

passwd* getpwuid(uid_t uid)
{
    CK_REAL(getpwuid);
    note_incomplete("a user was looked up");
    return real(uid);
}

passwd* getpwnam(const char* name)
{
    CK_REAL(getpwnam);
    note_incomplete("a user was looked up");
    return real(name);
}

int getpwuid_r(uid_t uid, passwd* entry, char* buf, size_t size, passwd** result)
{
    CK_REAL(getpwuid_r);
    note_incomplete("a user was looked up");
    return real(uid, entry, buf, size, result);
}

int getpwnam_r(const char* name, passwd* entry, char* buf, size_t size, passwd** result)
{
    CK_REAL(getpwnam_r);
    note_incomplete("a user was looked up");
    return real(name, entry, buf, size, result);
}

}  // extern "C"
