#include "host/module_scan.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <algorithm>
#include <unordered_map>

namespace ck {

namespace fs = std::filesystem;

namespace {

bool has_init(const fs::path& dir)
{
    std::error_code error;
    return fs::is_regular_file(dir / "__init__.py", error);
}

bool is_skipped_dir(const std::string& name)
{
    return name.empty() || name[0] == '.' || name == "__pycache__" || name == "__pyccel__";
}

// `<x><suffix>.py`, or `<x><suffix>_<y>.py` (Struphy's evaluation_kernels_1d.py).
bool is_suffix_module(const std::string& name, const std::string& suffix)
{
    if (name.rfind("test_", 0) == 0 || !name.ends_with(".py")) return false;
    std::string stem = name.substr(0, name.size() - 3);
    return (stem.ends_with(suffix) && stem.size() > suffix.size()) || stem.find(suffix + "_") != std::string::npos;
}

void scan(const fs::path& dir, const std::string& suffix, std::vector<fs::path>& found)
{
    std::error_code error;
    std::vector<fs::path> folders;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
        std::string name = it->path().filename().string();
        std::error_code type_error;
        if (it->is_directory(type_error)) {
            if (!is_skipped_dir(name) && !it->is_symlink(type_error)) folders.push_back(it->path());
        } else if (is_suffix_module(name, suffix)) {
            found.push_back(it->path());
        }
    }
    if (error) throw SourceError("cannot list " + dir.string() + ": " + error.message());
    for (const auto& folder : folders) scan(folder, suffix, found);
}

// Which folders hold an `__init__.py`, each asked once: Struphy's 149
// modules live in 50 folders below one chain of packages.
class PackageFolders {
public:
    PythonModuleFile module_file(const fs::path& normal)
    {
        fs::path top = normal.parent_path();
        if (!is_package(top)) return {normal, top};
        while (top.parent_path() != top.parent_path().parent_path() && is_package(top.parent_path()))
            top = top.parent_path();
        return {normal, top.parent_path()};
    }

private:
    bool is_package(const fs::path& dir)
    {
        auto [it, inserted] = known_.emplace(dir.native(), false);
        if (inserted) it->second = has_init(dir);
        return it->second;
    }

    std::unordered_map<std::string, bool> known_;
};

}  // namespace

PythonModuleFile python_module_file(const fs::path& file)
{
    PackageFolders folders;
    return folders.module_file(util::absolute_normal(file));
}

std::vector<PythonModuleFile> find_suffix_modules(const std::vector<fs::path>& paths, const std::string& host_suffix)
{
    std::vector<fs::path> files;
    for (const auto& path : paths) {
        std::error_code error;
        if (fs::is_directory(path, error)) scan(util::absolute_normal(path), host_suffix, files);
    }
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    std::vector<PythonModuleFile> modules;
    PackageFolders folders;
    for (const auto& file : files) modules.push_back(folders.module_file(file));
    return modules;
}

}  // namespace ck
