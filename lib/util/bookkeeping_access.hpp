// Marks file accesses that the tool makes for its own bookkeeping: a memo's
// load and save (the source record), the cache's hit counters and use
// stamps. None of them changes an answer, so the CLI's record of whole
// answers (cache_admin/answer_record.hpp) takes no witness from them and does not
// count their writes as the plan's. Were the source record a witness, every
// status that refreshes it would make the recorded answer look stale; were
// a hit counter a write, no warm build could be recorded. Bookkeeping a
// printed-again answer must repeat (a build's counters and use stamps) it
// carries in RecordedAnswer::bookkeeping.
#pragma once

namespace ck::util {

/// While one lives, this thread's file accesses are bookkeeping. Nests.
class BookkeepingFileAccess {
public:
    BookkeepingFileAccess();
    ~BookkeepingFileAccess();
    BookkeepingFileAccess(const BookkeepingFileAccess&) = delete;
    BookkeepingFileAccess& operator=(const BookkeepingFileAccess&) = delete;

    /// Whether this thread is inside one now.
    static bool active();
};

}  // namespace ck::util
