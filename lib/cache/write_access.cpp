#include "cache/write_access.hpp"

#include <sys/stat.h>

#include <cstdio>

namespace ck {

namespace fs = std::filesystem;

namespace {

std::string octal_mode(mode_t mode)
{
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// "" when `path` is not writable by others (or cannot be read: its reader says why).
std::string check(const fs::path& path, const fs::path& root, bool follow)
{
    struct stat info {};
    int status = follow ? ::stat(path.c_str(), &info) : ::lstat(path.c_str(), &info);
    if (status != 0 || S_ISLNK(info.st_mode) || !(info.st_mode & S_IWOTH)) return "";
    return path.string() + " can be written by every user (mode " + octal_mode(info.st_mode) +
           "), so anyone could replace what is loaded from the cache; nothing was loaded from it. Fix it with "
           "`chmod o-w " + path.string() + "` (or `chmod -R o-w " + root.string() +
           "`); a cache shared by a group needs only group write (`chmod -R g+w`, and `chmod g+s` on its folders)";
}

}  // namespace

std::string other_writable_problem(const fs::path& root, const fs::path& entry, const std::vector<fs::path>& files,
                                   std::set<std::string>* cleared)
{
    std::set<std::string> cleared_here;  // package folders shared by an entry's files are checked once
    if (!cleared) cleared = &cleared_here;
    auto folder_problem = [&](const fs::path& folder, bool follow) -> std::string {
        if (cleared->count(folder.native())) return "";
        std::string problem = check(folder, root, follow);
        if (problem.empty()) cleared->insert(folder.native());
        return problem;
    };
    if (std::string problem = folder_problem(root, true); !problem.empty()) return problem;
    if (entry.empty()) return "";
    fs::path relative = entry.lexically_relative(root);
    fs::path folder = root;
    for (const auto& part : relative) {
        if (part == "..") return "";  // not below the root: not ours to judge
        folder /= part;
        if (std::string problem = folder_problem(folder, false); !problem.empty()) return problem;
    }
    for (const auto& file : files) {
        // A host entry keeps its module in Pyccel's package folders (a/b/m.so): each is checked too.
        fs::path inside = entry;
        for (const auto& part : file.parent_path()) {
            inside /= part;
            if (std::string problem = folder_problem(inside, false); !problem.empty()) return problem;
        }
        if (std::string problem = check(entry / file, root, false); !problem.empty()) return problem;
    }
    return "";
}

}  // namespace ck
