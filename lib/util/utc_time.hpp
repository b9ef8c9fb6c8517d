// The wall clock as manifests record it.
#pragma once

#include <string>

namespace ck::util {

/// Now, as ISO 8601 in UTC: `2026-11-30T00:08:54Z`.
std::string utc_now();

}  // namespace ck::util
