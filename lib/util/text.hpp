// Small text helpers shared by reports and messages.
#pragma once

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

}  // namespace ck::util
