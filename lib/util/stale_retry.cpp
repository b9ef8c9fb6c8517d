#include "util/stale_retry.hpp"

#include "util/file_util.hpp"

#include <cerrno>

namespace ck::util {

void throw_read_error(const std::filesystem::path& path, int error)
{
    std::string message = "cannot read " + path.string() + ": " + errno_message(error);
    if (error == ESTALE)
        throw TransientReadError(message + ", tried " + std::to_string(StaleRetry{}.tries) +
                                 " times: another node replaced or removed it meanwhile (a network file system); "
                                 "run the command again");
    throw SourceError(message);
}

}  // namespace ck::util
