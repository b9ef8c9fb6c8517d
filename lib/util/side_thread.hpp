// Two pieces of work on two cores, or one after the other when the process
// may start no thread.
#pragma once

#include <functional>

namespace ck::util {

/// Runs `side` on a second thread while `main` runs on this one, and returns
/// once both are done. When no thread can be started (std::system_error: a
/// process or thread limit, as `ulimit -u` sets), runs `side` after `main`
/// on this thread: the work is done either way. `side` must not throw (it
/// catches and keeps its own errors); what `main` throws is thrown after
/// `side` finished.
void run_beside(const std::function<void()>& side, const std::function<void()>& main);

}  // namespace ck::util
