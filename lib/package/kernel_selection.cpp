// kernels_of_paths: folders walked, files mapped to the kernel they belong to.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"

#include <map>
#include <set>

namespace ck {

namespace fs = std::filesystem;

std::vector<KernelSource> kernels_of_paths(const std::vector<fs::path>& paths, const Config& config, WalkWarning warn)
{
    std::vector<fs::path> folders, files;
    for (const auto& path : paths) {
        std::error_code error;
        if (!fs::exists(path, error)) throw UsageError(path.string() + ": no such file or folder");
        (fs::is_directory(path, error) ? folders : files).push_back(path);
    }
    std::map<std::string, KernelSource> found;
    if (!folders.empty() || files.empty())
        for (auto& kernel : find_kernels(folders, config, warn)) found.emplace(kernel.module, std::move(kernel));
    std::set<fs::path> asked;
    for (const auto& file : files) {
        std::error_code error;
        fs::path folder = fs::absolute(file, error).lexically_normal().parent_path();
        if (!asked.insert(folder).second) continue;
        if (auto kernel = kernel_of_file(file, config)) found.emplace(kernel->module, std::move(*kernel));
    }
    std::vector<KernelSource> kernels;
    for (auto& [module, kernel] : found) kernels.push_back(std::move(kernel));
    return kernels;
}

}  // namespace ck
