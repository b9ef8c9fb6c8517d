// Elapsed wall time as builds and loads report it: seconds, as a double,
// of the steady clock (never moved by clock adjustments).
#pragma once

#include <chrono>

namespace ck::util {

/// Seconds of the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ck::util
