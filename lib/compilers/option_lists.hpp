// Option values as nvcc reads them: blanks around a value ignored, and the
// list options (`-I a,b`, `-optf f,g`, `--compiler-options a,b`) split at
// every comma. Shared by the option check and the forwarded-option parser.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace ck {

/// `text` without the spaces and tabs at its ends.
inline std::string trimmed(const std::string& text)
{
    auto begin = text.find_first_not_of(" \t");
    return begin == std::string::npos ? "" : text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

/// The comma-separated items of `value`, each trimmed; empty items dropped.
/// nvcc's list options (`-I a,b`, `-isystem=a,b`, `-include a.h,b.h`,
/// `-optf f,g`) take several values in one, split at every comma: each is one
/// folder or file for the search and the key, as for nvcc. NVRTC's options are
/// given one value each, so a folder whose name holds a comma cannot be named
/// through them with either compiler.
inline std::vector<std::string> comma_list_items(const std::string& value)
{
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= value.size()) {
        std::size_t end = std::min(value.find(',', start), value.size());
        std::string item = trimmed(value.substr(start, end - start));
        if (!item.empty()) items.push_back(item);
        start = end + 1;
    }
    return items;
}

}  // namespace ck
