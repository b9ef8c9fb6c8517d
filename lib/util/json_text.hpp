// JSON text of values whose strings are bytes.
//
// nlohmann::json refuses to write a string that is not UTF-8
// (type_error.316) and to read a lone surrogate escape, but the library's
// strings are bytes: paths, include names, module names, compiler logs. Every
// JSON it writes or reads (reports, cache records and manifests, bundle
// headers, requests to and answers from its Python children) goes through
// these two functions, which spell a byte outside well-formed UTF-8 as Python's
// surrogateescape does: byte 0xNN (0x80 to 0xFF) is the escape \udcNN, so
// "caf\xe9" is written "caf\udce9". Python's json.load then os.fsencode give
// the bytes back, and a Python child's json.dump of an os.fsdecode'd path is
// read back as the bytes. Well-formed UTF-8 is written exactly as nlohmann
// writes it, so cache keys over UTF-8 inputs do not change.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace ck::util {

/// `value` as JSON text, compact (`indent` -1) or with `indent` spaces a level,
/// laid out as nlohmann::json::dump lays it out. Never throws for a string
/// that is not UTF-8.
std::string json_text(const nlohmann::json& value, int indent = -1);

/// The value of JSON `text`, reading each \udc80 to \udcff escape that is not
/// the second half of a surrogate pair as the byte 0x80 to 0xff (json_text's
/// inverse). `callback` and `allow_exceptions` are nlohmann::json::parse's
/// (the callback sees a byte as the marker described in json_text.cpp).
/// Throws nlohmann::json::parse_error for malformed text unless
/// `allow_exceptions` is false, which returns a discarded value instead.
nlohmann::json parse_json(std::string_view text, const nlohmann::json::parser_callback_t& callback = nullptr,
                          bool allow_exceptions = true);

}  // namespace ck::util
