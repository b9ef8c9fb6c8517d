// kernels_of_paths: folders walked, files mapped to the kernel they belong to,
// headers to the kernels that include them.
#include "source/include_scanner.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"
#include "package/kernel_walker.hpp"
#include "util/file_util.hpp"
#include "util/library_surface.hpp"

#include <deque>
#include <map>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

bool is_header(const fs::path& file)
{
    static const std::set<std::string> extensions = {".cuh", ".h", ".hh", ".hpp", ".hxx", ".inl"};
    return extensions.count(file.extension().string()) > 0;
}

fs::path canonical_or_empty(const fs::path& path)
{
    std::error_code error;
    fs::path canonical = fs::canonical(path, error);
    return error ? fs::path() : canonical;
}

// Whether `kernel`'s CUDA source includes `header`, directly or through other
// project headers, searched as the build searches them (quoted names beside
// the includer first). Bounded: a header is read once, 256 at most.
bool includes(const KernelSource& kernel, const Config& config, const fs::path& header)
{
    constexpr std::size_t max_files = 256;
    if (!kernel.cuda_file) return false;
    std::vector<fs::path> dirs = kernel.include_dirs(config);
    std::deque<fs::path> pending = {*kernel.cuda_file};
    std::set<fs::path> seen;
    while (!pending.empty() && seen.size() < max_files) {
        fs::path file = canonical_or_empty(pending.front());
        pending.pop_front();
        if (file.empty() || !seen.insert(file).second) continue;
        if (file == header) return true;
        std::string text;
        try {
            text = util::read_file(file);
        } catch (const Error&) {
            continue;
        }
        for (const auto& directive : list_includes(text).includes) {
            std::vector<fs::path> candidates;
            if (directive.quoted) candidates.push_back(file.parent_path() / directive.name);
            for (const auto& dir : dirs) candidates.push_back(dir / directive.name);
            for (const auto& candidate : candidates) {
                std::error_code error;
                if (!fs::is_regular_file(candidate, error)) continue;
                pending.push_back(candidate);
                break;
            }
        }
    }
    return false;
}

// The tree a header belongs to: its pyproject.toml's folder, else the
// folder above its Python package (the source root).
fs::path tree_of_header(const fs::path& header, const Config& config)
{
    if (!config.source_file.empty()) return config.source_file.parent_path();
    auto has_init = [](const fs::path& folder) {
        std::error_code error;
        return fs::is_regular_file(folder / "__init__.py", error);
    };
    fs::path folder = header.parent_path();
    while (has_init(folder) && folder != folder.parent_path()) folder = folder.parent_path();
    return folder;
}

}  // namespace

std::vector<KernelSource> kernels_of_paths(const std::vector<fs::path>& paths, const Config& config, WalkWarning warn)
{
    return util::at_library_surface("kernels_of_paths", [&] {
        return kernels_of_paths(paths, config, caller_walk_warning(std::move(warn)), nullptr);
    });
}

std::vector<KernelSource> kernels_of_paths(const std::vector<fs::path>& paths, const Config& config, WalkWarning warn,
                                           SourceRecord* record)
{
    std::vector<fs::path> folders, files, headers;
    for (const auto& path : paths) {
        std::error_code error;
        if (!fs::exists(path, error)) throw UsageError(path.string() + ": no such file or folder");
        if (fs::is_directory(path, error))
            folders.push_back(path);
        else
            (is_header(path) ? headers : files).push_back(path);
    }
    std::map<std::string, KernelSource> found;
    // The same kernel named twice (its folder and its file) counts once; another
    // kernel of the same module (another tree) is named, as the walk names it.
    auto add = [&](KernelSource&& kernel) {
        // try_emplace moves `kernel` only when it inserts: a duplicate is intact for the warning.
        auto [first, added] = found.try_emplace(kernel.module, std::move(kernel));
        if (added || !warn) return;
        std::error_code error;  // a folder named through a link is the same folder
        if (first->second.folder != kernel.folder && !fs::equivalent(first->second.folder, kernel.folder, error))
            warn(duplicate_module_warning(kernel, first->second));
    };
    if (!folders.empty() || (files.empty() && headers.empty()))
        for (auto& kernel : find_kernels(folders, config, warn, record)) add(std::move(kernel));
    std::set<fs::path> asked;
    for (const auto& file : files) {
        std::error_code error;
        fs::path folder = fs::absolute(file, error).lexically_normal().parent_path();
        if (!asked.insert(folder).second) continue;
        if (auto kernel = kernel_of_file(file, config, record)) add(std::move(*kernel));
    }
    std::map<fs::path, std::vector<KernelSource>> trees;
    for (const auto& header : headers) {
        fs::path canonical = canonical_or_empty(header);
        fs::path tree = tree_of_header(canonical, config);
        if (!trees.count(tree)) trees[tree] = find_kernels({tree}, config, {}, record);
        for (const auto& kernel : trees[tree]) {
            auto known = found.find(kernel.module);
            if (known != found.end() && known->second.folder == kernel.folder) continue;  // selected already
            if (includes(kernel, config, canonical)) add(KernelSource(kernel));
        }
    }
    std::vector<KernelSource> kernels;
    for (auto& [module, kernel] : found) kernels.push_back(std::move(kernel));
    return kernels;
}

}  // namespace ck
