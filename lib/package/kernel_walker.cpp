// Finding kernel folders in trees, by cunumpy's conventions (see package.hpp).
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

bool is_skipped_dir(const std::string& name)
{
    return name.empty() || name[0] == '.' || name == "__pycache__" || name == "__pyccel__";
}

bool is_file(const fs::path& path)
{
    std::error_code error;
    return fs::is_regular_file(path, error);
}

// cunumpy prefers pyccel, then numba, then numpy; the host-suffix file is the
// pyccel one (from_package) and `_pyccel` is from_folder's name for it.
std::vector<HostImplementation> host_implementations(const fs::path& folder, const std::string& name,
                                                     const Config& config)
{
    std::vector<HostImplementation> found;
    auto add = [&](const std::string& kind, const std::string& suffix) {
        fs::path file = folder / (name + suffix + ".py");
        bool duplicate = std::any_of(found.begin(), found.end(), [&](auto& h) { return h.file == file; });
        if (!duplicate && is_file(file)) found.push_back({kind, file});
    };
    add("pyccel", config.host_suffix);
    add("pyccel", "_pyccel");
    add("numba", "_numba");
    add("numpy", "_numpy");
    return found;
}

bool has_init(const fs::path& dir)
{
    return is_file(dir / "__init__.py");
}

// The top-level package is the highest folder of an unbroken chain of
// `__init__.py` above the kernel; without one, the kernel's parent stands in.
void locate_package(KernelSource& kernel)
{
    fs::path top = kernel.folder.parent_path();
    for (fs::path up = top.parent_path(); has_init(top) && has_init(up) && up != up.parent_path();
         up = up.parent_path())
        top = up;
    kernel.source_root = top.parent_path();
    kernel.top_package = top.filename().string();
    std::string module;
    for (const auto& part : kernel.folder.lexically_relative(kernel.source_root))
        module += (module.empty() ? "" : ".") + part.string();
    kernel.module = module;
}

std::optional<KernelSource> kernel_in(const fs::path& folder, const Config& config)
{
    KernelSource kernel;
    kernel.name = folder.filename().string();
    if (is_skipped_dir(kernel.name)) return std::nullopt;
    kernel.host = host_implementations(folder, kernel.name, config);
    if (kernel.host.empty()) return std::nullopt;
    kernel.folder = folder;
    fs::path cuda = folder / (kernel.name + config.cuda_suffix + ".cu");
    if (is_file(cuda)) kernel.cuda_file = cuda;
    locate_package(kernel);
    return kernel;
}

bool is_ascii_identifier(const std::string& name)
{
    auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    auto tail = [&](char c) { return head(c) || (c >= '0' && c <= '9'); };
    return !name.empty() && head(name[0]) && std::all_of(name.begin() + 1, name.end(), tail);
}

class Walker {
public:
    Walker(const Config& config, WalkWarning warn) : config_(config), warn_(warn) {}

    void add_path(const fs::path& given)
    {
        std::error_code error;
        fs::path path = fs::absolute(given, error).lexically_normal();
        if (!path.has_filename()) path = path.parent_path();
        if (!fs::exists(path, error)) throw UsageError(given.string() + ": no such file or folder");
        if (!fs::is_directory(path, error)) throw UsageError(given.string() + ": not a folder of kernels");
        if (first_visit(path)) visit_folder(path);
    }

    std::vector<KernelSource> take()
    {
        std::vector<KernelSource> kernels;
        for (auto& [module, kernel] : found_) kernels.push_back(std::move(kernel));
        return kernels;
    }

private:
    bool first_visit(const fs::path& dir)
    {
        struct stat info {};
        if (::stat(dir.c_str(), &info) != 0) return false;
        return visited_.insert({info.st_dev, info.st_ino}).second;
    }

    void walk(const fs::path& dir)
    {
        std::vector<fs::path> children;
        std::error_code error;
        for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
            if (is_skipped_dir(it->path().filename().string())) continue;
            std::error_code type_error;
            if (it->is_directory(type_error)) children.push_back(it->path());
        }
        if (error) throw SourceError("cannot list " + dir.string() + ": " + error.message());
        std::sort(children.begin(), children.end());
        for (const auto& child : children) visit(child);
    }

    void visit(const fs::path& child)
    {
        if (!first_visit(child)) {
            std::error_code error;
            if (fs::is_symlink(child, error) && warn_)
                warn_(child.string() + ": symlink to a folder already walked; not followed again");
            return;
        }
        visit_folder(child);
    }

    // A folder holding kernel folders is a package, not a kernel, even when it
    // holds `<name>_kernels.py` (Struphy's bsplines/bsplines_kernels.py is a
    // module beside the kernel package bsplines/kernels/).
    void visit_folder(const fs::path& dir)
    {
        auto candidate = kernel_in(dir, config_);
        std::size_t found_before = found_.size();
        walk(dir);
        if (candidate && found_.size() == found_before) add_kernel(std::move(*candidate));
    }

    void add_kernel(KernelSource kernel)
    {
        // Python imports the kernel module by this name, and Pyccel's C wrapper names its init
        // function after it: a folder like `my-kern` or `café` can never be a kernel.
        if (!is_ascii_identifier(kernel.name)) {
            if (warn_)
                warn_(kernel.folder.string() + ": '" + kernel.name +
                      "' is not an ASCII Python identifier (letters, digits, _): Python cannot import it as a "
                      "kernel module (cunumpy's from_package fails on it too) and Pyccel cannot build "
                      "non-ASCII names; skipped. Rename the folder and its files");
            return;
        }
        if (config_.check_name_length && kernel.name.size() > max_kernel_name_length && warn_) {
            warn_(kernel.folder.string() + ": kernel name '" + kernel.name + "' has " +
                  std::to_string(kernel.name.size()) + " characters; Pyccel's Fortran backend compiles at most " +
                  std::to_string(max_kernel_name_length) +
                  " (bind_c_<name>_kernels must fit Fortran's 63-character limit). Rename it, or set "
                  "check-name-length = false when you build with the C backend");
        }
        found_.emplace(kernel.module, std::move(kernel));
    }

    const Config& config_;
    WalkWarning warn_;
    std::set<std::pair<dev_t, ino_t>> visited_;
    std::map<std::string, KernelSource> found_;
};

}  // namespace

std::vector<fs::path> KernelSource::include_dirs(const Config& config) const
{
    std::vector<fs::path> dirs = {folder, source_root};
    dirs.insert(dirs.end(), config.include_dirs.begin(), config.include_dirs.end());
    return dirs;
}

std::vector<KernelSource> find_kernels(const std::vector<fs::path>& paths, const Config& config, WalkWarning warn)
{
    Walker walker(config, warn);
    if (paths.empty()) walker.add_path(fs::current_path());
    for (const auto& path : paths) walker.add_path(path);
    return walker.take();
}

std::optional<KernelSource> kernel_of_file(const fs::path& file, const Config& config)
{
    std::error_code error;
    fs::path folder = fs::absolute(file, error).lexically_normal().parent_path();
    if (folder.filename() == "__pyccel__") folder = folder.parent_path();
    auto kernel = kernel_in(folder, config);
    if (!kernel) return kernel;
    // The walk's rule: a folder holding kernel folders is a package.
    Walker walker(config, {});
    walker.add_path(folder);
    auto below = walker.take();
    if (below.size() == 1 && below.front().folder == kernel->folder) return kernel;
    return std::nullopt;
}

}  // namespace ck
