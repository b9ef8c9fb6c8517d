// Marks file accesses that a memo makes for itself (the source record's
// load and save): they save work and never change an answer, so the CLI's
// record of whole status answers (status/status_record.hpp) takes no
// witness from them. Were the source record a witness, every status that
// refreshes it would make the recorded answer look stale.
#pragma once

namespace ck::util {

/// While one lives, this thread's file accesses are a memo's own. Nests.
class MemoFileAccess {
public:
    MemoFileAccess();
    ~MemoFileAccess();
    MemoFileAccess(const MemoFileAccess&) = delete;
    MemoFileAccess& operator=(const MemoFileAccess&) = delete;

    /// Whether this thread is inside one now.
    static bool active();
};

}  // namespace ck::util
