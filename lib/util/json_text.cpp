#include "util/json_text.hpp"

#include "util/byte_text.hpp"

#include <charconv>
#include <cstdio>
#include <optional>

namespace ck::util {

using nlohmann::json;

namespace {

std::string hex_escape(const char* format, unsigned value)
{
    char escape[16];
    std::snprintf(escape, sizeof escape, format, value);
    return escape;
}

// A run of well-formed UTF-8 as nlohmann quotes it, without the quotes.
void append_utf8_run(std::string_view run, std::string& out)
{
    if (run.empty()) return;
    std::string quoted = json(std::string(run)).dump();
    out.append(quoted, 1, quoted.size() - 2);
}

void append_string(std::string_view text, std::string& out)
{
    out += '"';
    std::size_t run_start = 0;
    for (std::size_t i = 0; i < text.size();) {
        if (std::size_t length = utf8_sequence_length(text.substr(i))) {
            i += length;
            continue;
        }
        append_utf8_run(text.substr(run_start, i - run_start), out);
        out += hex_escape("\\udc%02x", static_cast<unsigned char>(text[i]));
        run_start = ++i;
    }
    append_utf8_run(text.substr(run_start), out);
    out += '"';
}

void append_value(const json& value, int indent, int depth, std::string& out);

// Opens a member or element line: ",\n" and the indent, or "," compact.
void append_separator(bool first, int indent, int depth, std::string& out)
{
    if (!first) out += ',';
    if (indent >= 0) out += '\n' + std::string(static_cast<std::size_t>(indent * depth), ' ');
}

void append_container(const json& value, int indent, int depth, std::string& out)
{
    bool object = value.is_object();
    if (value.empty()) {
        out += object ? "{}" : "[]";
        return;
    }
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it, first = false) {
        append_separator(first, indent, depth + 1, out);
        if (object) {
            append_string(it.key(), out);
            out += indent >= 0 ? ": " : ":";
        }
        append_value(*it, indent, depth + 1, out);
    }
    append_separator(true, indent, depth, out);
    out += object ? '}' : ']';
}

void append_value(const json& value, int indent, int depth, std::string& out)
{
    if (value.is_string())
        append_string(value.get_ref<const std::string&>(), out);
    else if (value.is_structured())
        append_container(value, indent, depth, out);
    else
        out += value.dump();
}

// The code unit of a \u escape's four hex digits at the start of `digits`.
std::optional<unsigned> hex_unit(std::string_view digits)
{
    unsigned unit = 0;
    if (digits.size() < 4) return std::nullopt;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + 4, unit, 16);
    return error == std::errc() && end == digits.data() + 4 ? std::optional(unit) : std::nullopt;
}

// nlohmann's parser takes neither raw bytes nor lone surrogate escapes in a
// string, so parse_json first rewrites each lone \udcNN (a byte) as the pair
// \u0000\u00NN and each \u0000 (a NUL) as \u0000\u0000: after parsing, a NUL is
// always followed by the byte it marks or by the NUL it stands for, which
// unmark_bytes undoes. Returns false when the text has nothing to rewrite.
bool mark_bytes(std::string_view text, std::string& marked)
{
    bool rewritten = false;
    std::size_t copied = 0, high_surrogate_end = std::string_view::npos;
    for (std::size_t i = text.find('\\'); i != std::string_view::npos && i + 1 < text.size(); i = text.find('\\', i)) {
        std::optional<unsigned> unit = text[i + 1] == 'u' ? hex_unit(text.substr(i + 2)) : std::nullopt;
        if (!unit) {
            i += 2;  // another escape, or one the parser will reject
            continue;
        }
        std::string replacement;
        if (*unit >= 0xdc80 && *unit <= 0xdcff && i != high_surrogate_end)
            replacement = hex_escape("\\u0000\\u00%02x", *unit & 0xff);
        else if (*unit == 0)
            replacement = "\\u0000\\u0000";
        high_surrogate_end = *unit >= 0xd800 && *unit <= 0xdbff ? i + 6 : std::string_view::npos;
        if (!replacement.empty()) {
            marked.append(text.substr(copied, i - copied)).append(replacement);
            copied = i + 6;
            rewritten = true;
        }
        i += 6;
    }
    if (rewritten) marked.append(text.substr(copied));
    return rewritten;
}

// A parsed string's NUL markers back to the bytes and NULs they stand for:
// NUL then U+0080..U+00FF (UTF-8 C2 80 to C3 BF) is that byte.
std::string unmark_string(const std::string& text)
{
    if (text.find('\0') == std::string::npos) return text;
    std::string bytes;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\0') {
            bytes += text[i];
        } else if (i + 1 < text.size() && text[i + 1] == '\0') {
            bytes += '\0';
            ++i;
        } else if (i + 2 < text.size()) {
            auto lead = static_cast<unsigned char>(text[i + 1]), low = static_cast<unsigned char>(text[i + 2]);
            bytes += static_cast<char>(lead == 0xc3 ? low + 0x40 : low);
            i += 2;
        }
    }
    return bytes;
}

void unmark_bytes(json& value)
{
    if (value.is_string()) {
        value = unmark_string(value.get_ref<const std::string&>());
    } else if (value.is_array()) {
        for (auto& element : value) unmark_bytes(element);
    } else if (value.is_object()) {
        json object = json::object();
        for (auto& [key, member] : value.items()) {
            unmark_bytes(member);
            object[unmark_string(key)] = std::move(member);
        }
        value = std::move(object);
    }
}

}  // namespace

std::string json_text(const json& value, int indent)
{
    // Nearly every value is UTF-8 throughout: nlohmann's own writer is the
    // fast path, and its refusal the sign to spell the bytes out.
    try {
        return value.dump(indent);
    } catch (const json::type_error&) {
        std::string out;
        append_value(value, indent, 0, out);
        return out;
    }
}

json parse_json(std::string_view text, const json::parser_callback_t& callback, bool allow_exceptions)
{
    std::string marked;
    if (!mark_bytes(text, marked)) return json::parse(text, callback, allow_exceptions);
    json value = json::parse(marked, callback, allow_exceptions);
    unmark_bytes(value);
    return value;
}

}  // namespace ck::util
