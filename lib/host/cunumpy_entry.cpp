#include "host/cunumpy_entry.hpp"

#include "util/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ck {

namespace fs = std::filesystem;

CunumpyEntry read_cunumpy_entry(const fs::path& root, const std::string& name, const std::string& ext_suffix)
{
    CunumpyEntry entry;
    entry.path = root / name;
    std::error_code error;
    auto status = fs::symlink_status(entry.path, error);
    if (error || !fs::exists(status)) return entry;
    if (fs::is_symlink(status)) {
        entry.kind = CunumpyEntry::Kind::link;
        entry.target = fs::read_symlink(entry.path, error);
        return entry;
    }
    std::string stem = name.substr(0, name.rfind('-'));
    if (fs::is_directory(status) && fs::is_regular_file(entry.path / (stem + ext_suffix), error))
        entry.kind = CunumpyEntry::Kind::folder;
    return entry;
}

void point_cunumpy_entry(const fs::path& root, const std::string& name, const fs::path& target)
{
    fs::path temporaries = root / temporary_folder_name;
    std::error_code error;
    fs::create_directories(temporaries, error);
    fs::path link = temporaries / unique_temporary_name();
    fs::create_symlink(target, link, error);
    if (error) throw CacheError("cannot create a link at " + link.string() + ": " + error.message());
    fs::path final_path = root / name;
    if (::rename(link.c_str(), final_path.c_str()) == 0) {
        util::fsync_dir(root);
        return;
    }
    int rename_error = errno;
    if (rename_error != EISDIR && rename_error != ENOTEMPTY && rename_error != EEXIST) {
        ::unlink(link.c_str());
        throw CacheError("cannot publish " + final_path.string() + ": " + util::errno_message(rename_error));
    }
    // A real folder: exchange it with the link, then remove it from its new place.
    if (::renameat2(AT_FDCWD, link.c_str(), AT_FDCWD, final_path.c_str(), RENAME_EXCHANGE) != 0) {
        int exchange_error = errno;
        ::unlink(link.c_str());
        throw CacheError("cannot replace " + final_path.string() + ": " + util::errno_message(exchange_error));
    }
    util::fsync_dir(root);
    fs::remove_all(link, error);
}

bool is_entry_key(const std::string& text)
{
    return text.size() == 64 && std::all_of(text.begin(), text.end(),
                                            [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string host_key_of_link(const fs::path& target)
{
    auto part = target.begin();
    if (part == target.end() || *part != "host" || ++part == target.end() || ++part == target.end()) return "";
    return is_entry_key(part->string()) ? part->string() : "";
}

std::map<std::string, std::vector<fs::path>> cunumpy_links_by_key(const fs::path& root)
{
    std::map<std::string, std::vector<fs::path>> links;
    std::error_code error;
    for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
        std::error_code inner;
        if (!it->is_symlink(inner)) continue;
        std::string key = host_key_of_link(fs::read_symlink(it->path(), inner));
        if (!key.empty()) links[key].push_back(it->path());
    }
    return links;
}

}  // namespace ck
