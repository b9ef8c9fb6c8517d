// Text that is bytes.
//
// Paths, include names and module names are whatever bytes the file system or
// the source holds, and need not be UTF-8 (a folder named in Latin-1). They
// stay bytes inside the library; only where they leave it as text are the bytes
// that are not UTF-8 spelled out: as \xNN in messages (printable) and as
// Python's surrogateescape in JSON (util/json_text.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ck::util {

/// The length (1 to 4) of the well-formed UTF-8 sequence at the start of
/// `text`, or 0 where its first byte starts none: a stray continuation byte, an
/// overlong form, an encoded surrogate, a code point past U+10FFFF, a sequence
/// cut short (Unicode 15, table 3-7). 0 for empty `text`.
std::size_t utf8_sequence_length(std::string_view text);

/// Whether `text` is well-formed UTF-8 throughout ("" is).
bool is_utf8(std::string_view text);

/// `text` for a person to read: every byte outside well-formed UTF-8 written as
/// \xNN in lower-case hex ("caf\xe9"); UTF-8 text is returned unchanged.
std::string printable(std::string_view text);

}  // namespace ck::util
