// Answering a command (`status`, a `build` with nothing to compile) from the
// record of whole answers (cache_admin/answer_record.hpp): printed again while
// everything it rests on holds, else planned under the file access log and
// kept for next time.
#pragma once

#include "commands.hpp"

#include "cache_admin/answer_record.hpp"

#include <functional>

namespace ck::cli {

/// Prints the answer to `line` and returns its exit code. The answer comes
/// from the record when one is kept under `line` and the process's
/// circumstances (this build of the tool, working folder, user, terminal) and
/// all its witnesses hold; else from `plan`, run with spdlog's messages held
/// back into the answer and under a FileAccessLog, and kept when the log can
/// vouch for it, the plan wrote nothing but bookkeeping and did not say
/// RecordedAnswer::not_to_keep. `recordable` false (an answer that rests on
/// another process's reads, or prints what the record does not hold) always
/// plans and keeps nothing. A recorded answer's bookkeeping is handed to
/// `repeat_bookkeeping` before it is printed; its RecordedAnswer::seconds_at
/// gets the seconds since this call began.
///
/// CUNUMPY_KERNELS_ANSWER_RECORD: unset or "on"; "off" (plan every time,
/// keep nothing); "check" (plan behind every recorded answer too, and throw
/// Error when the two differ). Throws UsageError for another value, and
/// whatever `plan` throws (its held-back messages are printed first).
int answer(const CommandLine& line, Terminal& terminal, bool recordable, const std::function<RecordedAnswer()>& plan,
           const std::function<void(const std::string&)>& repeat_bookkeeping = {});

}  // namespace ck::cli
