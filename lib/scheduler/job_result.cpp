#include "scheduler/job_result.hpp"

namespace ck {

const char* to_string(JobState state)
{
    switch (state) {
        case JobState::hit:
            return "hit";
        case JobState::built:
            return "built";
        case JobState::failed:
            return "failed";
        case JobState::would_build:
            return "would-build";
    }
    return "?";
}

}  // namespace ck
