// The folders cunumpy's PyccelCache loads host builds from:
// `<root>/<stem>-<20 hex>/<stem><EXT_SUFFIX>`. cunumpy writes real folders
// there; `build` makes the name a symbolic link to the folder of one of its
// own entries, so that cunumpy loads our builds and dependants' builds can
// keep pointing at an immutable folder.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ck {

/// What `<root>/<name>` is now.
struct CunumpyEntry {
    enum class Kind {
        absent,  ///< nothing, or something cunumpy cannot load
        link,    ///< a symbolic link (ours); `target` is where it points, as written
        folder,  ///< a real folder (cunumpy built it) holding the extension
    };
    Kind kind = Kind::absent;
    std::filesystem::path path;    ///< `<root>/<name>`
    std::filesystem::path target;  ///< link: the link's text
};

/// Reads `<root>/<name>`; a folder counts only when it holds `<stem><ext_suffix>`.
CunumpyEntry read_cunumpy_entry(const std::filesystem::path& root, const std::string& name,
                                const std::string& ext_suffix);

/// Points `<root>/<name>` at `target` (relative to `root`) with one atomic
/// rename: a reader sees the old content or the new link, never nothing. A
/// real folder there (a build of cunumpy's) is swapped out with
/// renameat2(RENAME_EXCHANGE) and removed. Throws CacheError on failure.
void point_cunumpy_entry(const std::filesystem::path& root, const std::string& name,
                         const std::filesystem::path& target);

/// Whether `text` is an entry key: 64 lowercase hex digits.
bool is_entry_key(const std::string& text);

/// The key of the host entry a cunumpy name's link text points into
/// (`host/<kk>/<key>/<package path>`, as point_cunumpy_entry writes it), or ""
/// for any other text.
std::string host_key_of_link(const std::filesystem::path& target);

/// Every cunumpy name directly under `root` that is a link into one of our
/// host entries, by that entry's key. Names cunumpy built itself (real
/// folders) are not ours and are left out.
std::map<std::string, std::vector<std::filesystem::path>> cunumpy_links_by_key(const std::filesystem::path& root);

}  // namespace ck
