#include "util/bookkeeping_access.hpp"

namespace ck::util {

namespace {

// Per thread, so that a side thread's planning is never mistaken for the
// main thread's record save.
thread_local int depth = 0;

}  // namespace

BookkeepingFileAccess::BookkeepingFileAccess()
{
    ++depth;
}

BookkeepingFileAccess::~BookkeepingFileAccess()
{
    --depth;
}

bool BookkeepingFileAccess::active()
{
    return depth > 0;
}

}  // namespace ck::util
