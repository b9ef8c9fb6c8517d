#include "util/checksummed.hpp"

#include "util/sha256.hpp"

namespace ck::util {

namespace {

constexpr std::size_t digest_length = 64;

}  // namespace

std::string checksummed(std::string_view format, std::string_view body)
{
    std::string text;
    text.reserve(format.size() + digest_length + 2 + body.size());
    ((text += format) += ' ') += sha256_hex(body);
    (text += '\n') += body;
    return text;
}

std::optional<std::string_view> checksummed_body(std::string_view format, std::string_view text)
{
    std::size_t line_end = text.find('\n');
    if (line_end != format.size() + 1 + digest_length) return std::nullopt;
    std::string_view body = text.substr(line_end + 1);
    if (text.substr(0, format.size()) != format || text[format.size()] != ' ' ||
        text.substr(format.size() + 1, digest_length) != sha256_hex(body))
        return std::nullopt;
    return body;
}

}  // namespace ck::util
