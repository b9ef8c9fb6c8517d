// The envelope of the tool's own record files (the source record, the key
// record): a first line "<format> <SHA-256 of the body>", then the body. A
// file a crash cut short, a flipped byte or another version's format is
// refused whole when read, so nothing in it is ever taken as a fact.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace ck::util {

/// `body` under its envelope line for `format` (no spaces or newlines).
/// Throws Error when libcrypto fails.
std::string checksummed(std::string_view format, std::string_view body);

/// The body of `text` when its first line names `format` and the SHA-256 of
/// the rest; none otherwise. The view points into `text`.
std::optional<std::string_view> checksummed_body(std::string_view format, std::string_view text);

/// A file time (stat's st_mtim, st_ctim) in nanoseconds since the epoch.
inline std::int64_t ns_of(const struct timespec& time)
{
    return static_cast<std::int64_t>(time.tv_sec) * 1000000000 + time.tv_nsec;
}

}  // namespace ck::util
