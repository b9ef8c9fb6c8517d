// Small text helpers shared by reports and messages.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

namespace ck::util {

/// "1 kernel", "2 kernels": `count` and `noun`, with `plural_noun` (default
/// `noun` + "s") unless `count` is 1.
inline std::string counted(std::size_t count, const std::string& noun, const std::string& plural_noun = "")
{
    return std::to_string(count) + " " + (count == 1 ? noun : plural_noun.empty() ? noun + "s" : plural_noun);
}

/// "a, b, c": `words` joined with ", " ("" for none).
inline std::string comma_list(const std::vector<std::string>& words)
{
    std::string text;
    for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
    return text;
}

/// `word` as one word of a POSIX sh command line: as it is when it holds
/// only characters no shell treats specially (letters, digits, `_-./:=@%+,`),
/// else in single quotes, each `'` written `'\''`. "" becomes `''`.
inline std::string shell_word(const std::string& word)
{
    static const std::string plain = "_-./:=@%+,";
    bool simple = !word.empty();
    for (unsigned char c : word)
        simple = simple && (std::isalnum(c) || plain.find(static_cast<char>(c)) != std::string::npos);
    if (simple) return word;
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

}  // namespace ck::util
