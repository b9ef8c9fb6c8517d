// Reads that another node can make fail for a moment. On a network file
// system (NFS, Lustre, GPFS) a client names a file by a handle to the inode
// it looked up; once another node replaces the file (a rename over it) or
// removes it, a read through that handle fails with ESTALE ("Stale file
// handle"). An open by name looks the path up afresh, so such a read is
// tried again, a bounded number of times, before it is given up as
// TransientReadError (the CLI's exit 75: try again later).
#pragma once

#include "cunumpy_kernels/error.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

namespace ck::util {

/// How often a read is tried in all, and the pause before the second try,
/// doubled before each next one: 5 tries over 10 + 20 + 40 + 80 ms.
struct StaleRetry {
    int tries = 5;
    std::chrono::milliseconds first_pause{10};
};

/// Throws the error of a read of `path` that failed with errno `error`:
/// TransientReadError for ESTALE, else SourceError "cannot read PATH: REASON".
[[noreturn]] void throw_read_error(const std::filesystem::path& path, int error);

/// Calls `read()` (which opens by name, so that each try looks the path up
/// again) until it returns without throwing TransientReadError, at most
/// `policy.tries` times; returns what it returned. Rethrows the last
/// TransientReadError, and any other exception at once.
template <class Read>
auto read_retrying_stale(Read&& read, const StaleRetry& policy = {}) -> decltype(read())
{
    auto pause = policy.first_pause;
    for (int attempt = 1;; ++attempt) {
        try {
            return read();
        } catch (const TransientReadError&) {
            if (attempt >= policy.tries) throw;
        }
        std::this_thread::sleep_for(pause);
        pause *= 2;
    }
}

}  // namespace ck::util
