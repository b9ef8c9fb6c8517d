#include "util/temporary_dir.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <sys/stat.h>

#include <cerrno>

namespace ck::util {

namespace fs = std::filesystem;

TemporaryDir::TemporaryDir(fs::path path) : path_(std::move(path))
{
    std::error_code ignored;  // a parent that cannot be made fails the mkdir below, which says why
    fs::create_directories(path_.parent_path(), ignored);
    if (::mkdir(path_.c_str(), 0700) != 0)
        throw CacheError("cannot create " + path_.string() + ": " + errno_message(errno));
}

TemporaryDir::~TemporaryDir()
{
    std::error_code ignored;
    fs::remove_all(path_, ignored);
}

}  // namespace ck::util
