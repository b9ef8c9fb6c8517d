#include "source/python_text.hpp"

#include <iconv.h>

#include <cctype>
#include <cerrno>

namespace ck::signatures {

namespace {

constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

bool is_coding_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

// PEP 263: the declaration must be a comment line (only whitespace before #).
std::string coding_of_line(std::string_view line)
{
    std::size_t hash = line.find_first_not_of(" \t\f");
    if (hash == std::string_view::npos || line[hash] != '#') return "";
    for (std::size_t at = line.find("coding", hash); at != std::string_view::npos; at = line.find("coding", at + 1)) {
        std::size_t p = at + 6;
        if (p >= line.size() || (line[p] != ':' && line[p] != '=')) continue;
        ++p;
        while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
        std::size_t end = p;
        while (end < line.size() && is_coding_char(line[end])) ++end;
        if (end > p) return std::string(line.substr(p, end - p));
    }
    return "";
}

// Python's codec names, normalized ("Latin_1" -> "latin-1").
std::string normalized(std::string name)
{
    for (auto& c : name) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return name;
}

bool is_utf8_name(const std::string& coding)
{
    std::string n = normalized(coding);
    return n == "utf-8" || n == "utf8" || n.rfind("utf-8-", 0) == 0;
}

// The name iconv knows for a Python codec name: Python's aliases of Latin-1
// that glibc spells otherwise, else the name itself.
std::string iconv_name(const std::string& coding)
{
    std::string n = normalized(coding);
    if (n == "latin-1" || n == "latin1" || n == "iso-latin-1" || n == "l1" || n.rfind("iso-8859-1-", 0) == 0)
        return "ISO-8859-1";
    return n;
}

// `bytes` in `coding` as UTF-8; false when iconv does not know the coding or
// the bytes are not of it.
bool decode(std::string_view bytes, const std::string& coding, std::string& out)
{
    iconv_t cd = iconv_open("UTF-8", iconv_name(coding).c_str());
    if (cd == reinterpret_cast<iconv_t>(-1)) return false;
    out.assign(bytes.size() * 4 + 16, '\0');
    char* in = const_cast<char*>(bytes.data());
    std::size_t in_left = bytes.size();
    char* to = out.data();
    std::size_t to_left = out.size();
    std::size_t done = iconv(cd, &in, &in_left, &to, &to_left);
    iconv_close(cd);
    if (done == static_cast<std::size_t>(-1) || in_left != 0) return false;
    out.resize(out.size() - to_left);
    return true;
}

// CRLF and lone CR become LF, as Python's universal newlines read them.
std::string with_lf(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\r')
            out += text[i];
        else if (i + 1 == text.size() || text[i + 1] != '\n')
            out += '\n';
    }
    return out;
}

}  // namespace

std::string python_coding(std::string_view bytes)
{
    if (bytes.substr(0, 3) == utf8_bom) bytes.remove_prefix(3);
    std::size_t begin = 0;
    for (int line = 0; line < 2 && begin < bytes.size(); ++line) {
        std::size_t end = bytes.find_first_of("\r\n", begin);
        std::string_view text =
            bytes.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
        std::string coding = coding_of_line(text);
        if (!coding.empty()) return coding;
        // PEP 263: the second line counts only when the first is a comment or blank.
        std::size_t first = text.find_first_not_of(" \t\f");
        if (first != std::string_view::npos && text[first] != '#') break;
        if (end == std::string_view::npos) break;
        begin = end + (bytes.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    }
    return "";
}

PythonText::PythonText(std::string_view bytes) : text_(bytes)
{
    if (bytes.substr(0, 3) == utf8_bom) bytes.remove_prefix(3);
    coding_ = python_coding(bytes);
    std::string decoded;
    bool recoded = !coding_.empty() && !is_utf8_name(coding_) && decode(bytes, coding_, decoded);
    std::string_view text = recoded ? std::string_view(decoded) : bytes;
    if (text.find('\r') != std::string_view::npos)
        owned_ = with_lf(text);
    else if (recoded)
        owned_ = std::move(decoded);
    else {
        text_ = bytes;
        return;
    }
    text_ = owned_;
}

}  // namespace ck::signatures

namespace ck {

std::string python_source_text(const std::string& bytes)
{
    bool plain = bytes.find('\r') == std::string::npos && bytes.compare(0, 3, "\xEF\xBB\xBF") != 0;
    if (plain) return bytes.empty() || bytes.back() == '\n' ? bytes : bytes + '\n';
    std::size_t start = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    std::string text;
    text.reserve(bytes.size() + 1);
    for (std::size_t i = start; i < bytes.size(); ++i) {
        if (bytes[i] != '\r') {
            text += bytes[i];
            continue;
        }
        text += '\n';
        if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    }
    if (!text.empty() && text.back() != '\n') text += '\n';
    return text;
}

}  // namespace ck
