#include "util/byte_text.hpp"

#include <cstdio>

namespace ck::util {

std::size_t utf8_sequence_length(std::string_view text)
{
    auto byte = [&text](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0x100u; };
    unsigned lead = byte(0);
    if (lead < 0x80) return 1;
    std::size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                         : lead >= 0xE0 && lead <= 0xEF ? 3
                         : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                        : 0;
    if (length == 0) return 0;
    // These leads would allow overlong forms, surrogates or code points past
    // U+10FFFF; their second byte's range excludes them.
    unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    if (byte(1) < low || byte(1) > high) return 0;
    for (std::size_t i = 2; i < length; ++i)
        if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
    return length;
}

bool is_utf8(std::string_view text)
{
    for (std::size_t i = 0, length = 0; i < text.size(); i += length)
        if ((length = utf8_sequence_length(text.substr(i))) == 0) return false;
    return true;
}

std::string printable(std::string_view text)
{
    if (is_utf8(text)) return std::string(text);
    std::string shown;
    for (std::size_t i = 0; i < text.size();) {
        std::size_t length = utf8_sequence_length(text.substr(i));
        if (length) {
            shown += text.substr(i, length);
            i += length;
            continue;
        }
        char escape[5];
        std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned char>(text[i++]));
        shown += escape;
    }
    return shown;
}

}  // namespace ck::util
