#include "util/atomic_file.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/temporary_name.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ck::util {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(const fs::path& target)
    : target_(target),
      temporary_(target.parent_path() / ("." + target.filename().string() + "." + unique_temporary_name()))
{
}

AtomicFile::~AtomicFile()
{
    if (!committed_) ::unlink(temporary_.c_str());
}

void AtomicFile::write(std::string_view bytes)
{
    // Not synced here: commit() syncs once, whichever way the bytes came.
    UniqueFd fd(::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) throw CacheError("cannot create " + temporary_.string() + ": " + errno_message(errno));
    write_all(fd.get(), bytes, temporary_);
}

void AtomicFile::copy_from(const fs::path& source)
{
    std::error_code error;
    fs::copy_file(source, temporary_, fs::copy_options::overwrite_existing, error);
    if (error)
        throw CacheError("cannot copy " + source.string() + " to " + temporary_.string() + ": " + error.message());
}

void AtomicFile::commit()
{
    UniqueFd fd(::open(temporary_.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid() || ::fsync(fd.get()) != 0)
        throw CacheError("cannot sync " + temporary_.string() + ": " + errno_message(errno));
    if (::rename(temporary_.c_str(), target_.c_str()) != 0)
        throw CacheError("cannot rename " + temporary_.string() + " to " + target_.string() + ": " +
                         errno_message(errno));
    committed_ = true;
}

}  // namespace ck::util
