#include "cache/write_access.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <iterator>

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
           "`chmod o-w " +
           path.string() + "` (or `chmod -R o-w " + root.string() +
           "`); a cache shared by a group needs only group write (`chmod -R g+w`, and `chmod g+s` on its folders)";
}

}  // namespace

bool ClearedFolders::contains(const std::string& folder) const
{
    std::lock_guard lock(mutex_);
    return folders_.count(folder) > 0;
}

void ClearedFolders::add(const std::string& folder)
{
    std::lock_guard lock(mutex_);
    folders_.insert(folder);
}

std::string other_writable_problem(const fs::path& root, const fs::path& entry, const std::vector<fs::path>& files,
                                   ClearedFolders* cleared)
{
    // A folder above the entry found fine is remembered; the entry and the
    // folders inside it are checked once in this call (an entry's files
    // share Pyccel's package folders).
    std::set<std::string> cleared_here;
    auto folder_problem = [&](const fs::path& folder, bool follow, bool above_entry) -> std::string {
        if (cleared_here.count(folder.native()) || (above_entry && cleared && cleared->contains(folder.native())))
            return "";
        std::string problem = check(folder, root, follow);
        if (!problem.empty()) return problem;
        cleared_here.insert(folder.native());
        if (above_entry && cleared) cleared->add(folder.native());
        return "";
    };
    if (std::string problem = folder_problem(root, true, true); !problem.empty()) return problem;
    if (entry.empty()) return "";
    fs::path relative = entry.lexically_relative(root);
    fs::path folder = root;
    for (auto part = relative.begin(); part != relative.end(); ++part) {
        if (*part == "..") return "";  // not below the root: not ours to judge
        folder /= *part;
        bool is_entry = std::next(part) == relative.end();
        if (std::string problem = folder_problem(folder, false, !is_entry); !problem.empty()) return problem;
    }
    for (const auto& file : files) {
        // A host entry keeps its module in Pyccel's package folders (a/b/m.so): each is checked too.
        fs::path inside = entry;
        for (const auto& part : file.parent_path()) {
            inside /= part;
            if (std::string problem = folder_problem(inside, false, false); !problem.empty()) return problem;
        }
        if (std::string problem = check(entry / file, root, false); !problem.empty()) return problem;
    }
    return "";
}

}  // namespace ck
