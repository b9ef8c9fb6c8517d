// Every path and environment variable this process asks about while a log
// is open: the witnesses of a recorded status answer
// (cache_admin/answer_record.hpp).
//
// The log sits where every such question passes, the C library's entry
// points (stat, open, opendir, realpath, getenv, ...), which this executable
// defines and exports so that libstdc++'s calls reach them too, and which
// pass each call on to the C library unchanged. Taken there, the witnesses
// are complete by construction: no reader of the planner has to remember to
// report what it read (tup records a command's reads at the same place, by
// preloading). The planner's own memos mark their files with
// util::BookkeepingFileAccess.
//
// This is the CLI's alone: the runtime library never interposes. It is the
// one process-wide mutable state of the CLI besides the logger, and at most
// one log is open at a time.
#pragma once

#include "cache_admin/answer_record.hpp"

#include <memory>

namespace ck::cli {

class FileAccessLog {
public:
    /// Opens the log. First checks that the calls the planner makes through
    /// libstdc++ (std::filesystem, std::ifstream, std::getenv) reach it; when
    /// one does not, the log is open but finish() says it is incomplete.
    /// Throws std::logic_error when another log is open.
    FileAccessLog();
    /// Closes the log if finish() did not.
    ~FileAccessLog();
    FileAccessLog(const FileAccessLog&) = delete;
    FileAccessLog& operator=(const FileAccessLog&) = delete;

    /// Closes the log and returns what it saw: paths made absolute against
    /// the working folder of the moment they were asked, less the process's
    /// own pseudo-files under /proc, /sys and /dev (a tmpfs such as
    /// /dev/shm is logged); FileAccesses::incomplete names the first thing
    /// that makes them no full account (a process started, a library
    /// loaded, the working folder changed, a user looked up in the password
    /// database, a path relative to a folder handle that cannot be named, a
    /// path through a link of /proc such as /proc/self/cwd/...).
    FileAccesses finish();

    struct Log;  ///< what an open log holds (file_access_log.cpp)

private:
    std::unique_ptr<Log> log_;
};

}  // namespace ck::cli
