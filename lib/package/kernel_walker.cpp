// Finding kernel folders in trees, by cunumpy's conventions (see package.hpp).
#include "package/kernel_walker.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"
#include "signatures/python_bindings.hpp"
#include "util/byte_text.hpp"
#include "util/file_util.hpp"
#include "util/library_surface.hpp"
#include "util/regular_files.hpp"
#include "util/sha256.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>
#include <functional>

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

// Whether a path is a regular file: a stat, or a walk's listing of the folder.
using FileTest = std::function<bool(const fs::path&)>;

// cunumpy's from_folder: the host-suffix file gives the pyccel (and python)
// implementation and makes the folder a kernel; `_numba` and `_numpy` files
// beside it add those implementations, never a kernel on their own.
std::vector<HostImplementation> host_implementations(const fs::path& folder, const std::string& name,
                                                     const Config& config, const FileTest& is_file)
{
    std::vector<HostImplementation> found;
    auto add = [&](const std::string& kind, const std::string& suffix) {
        fs::path file = folder / (name + suffix + ".py");
        bool duplicate = std::any_of(found.begin(), found.end(), [&](auto& h) { return h.file == file; });
        if (!duplicate && is_file(file)) found.push_back({kind, file});
    };
    add("pyccel", config.host_suffix);
    if (found.empty()) return found;
    add("numba", "_numba");
    add("numpy", "_numpy");
    return found;
}

// The top-level package is the highest folder of an unbroken chain of
// `__init__.py` above the kernel; without one, the kernel's parent stands in.
void locate_package(KernelSource& kernel, const FileTest& is_file)
{
    auto has_init = [&](const fs::path& dir) { return is_file(dir / "__init__.py"); };
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

std::optional<KernelSource> kernel_in(const fs::path& folder, const Config& config, const FileTest& is_file)
{
    KernelSource kernel;
    kernel.name = folder.filename().string();
    if (is_skipped_dir(kernel.name)) return std::nullopt;
    kernel.host = host_implementations(folder, kernel.name, config, is_file);
    if (kernel.host.empty()) return std::nullopt;
    kernel.folder = folder;
    fs::path cuda = folder / cuda_file_name(kernel.name, config);
    if (is_file(cuda))
        kernel.cuda_file = cuda;
    else if (is_file(cuda.string() + ".cu"))
        kernel.misspelled_cuda_file = cuda.string() + ".cu";
    locate_package(kernel, is_file);
    return kernel;
}

// cunumpy's from_folder takes `getattr(module, name)`: a module that never
// binds the name raises AttributeError, and with it from_package of the whole
// parent package. False when the module cannot be read: it is kept, so that
// check-signatures reports the file itself.
bool binds_no_kernel(const KernelSource& kernel, SourceRecord* record = nullptr)
{
    const fs::path& module = kernel.host.front().file;
    auto binds = [&](const std::string& source) { return signatures::python_module_binds(source, kernel.name); };
    try {
        return !(record ? record->fact(module, util::json_text(nlohmann::json::array({"binds/1", kernel.name})), binds)
                              .get<bool>()
                        : binds(util::read_file(module)));
    } catch (const SourceError&) {
        return false;
    }
}

const char* const not_a_kernel_consequence =
    "cunumpy's Kernel.from_folder raises AttributeError there, and with it KernelCatalog.from_package of the parent "
    "package";

// Where the warning about such folders points: the one host module, or the
// folder that holds them all.
fs::path not_kernels_location(const std::vector<KernelSource>& folders)
{
    if (folders.size() == 1) return folders.front().host.front().file;
    fs::path common = folders.front().folder.parent_path();
    for (const auto& folder : folders)
        while (!common.empty() && folder.folder.lexically_relative(common).string().starts_with(".."))
            common = common.parent_path();
    return common;
}

// One warning for every folder of a walk whose host module binds no function
// of the folder's name: a tree such as Struphy's has several, and one
// paragraph each on every command told the user the same thing six times.
std::string not_kernels_warning(const std::vector<KernelSource>& folders)
{
    const KernelSource& first = folders.front();
    if (folders.size() == 1)
        return first.host.front().file.string() + ": defines no function '" + first.name +
               "', so this folder is not "
               "a kernel (" +
               not_a_kernel_consequence + "); define " + first.name +
               "() in it, or rename the file if "
               "the folder is not meant as a kernel, or list it in the not-kernels key (cunumpy-kernels(5))";
    fs::path common = not_kernels_location(folders);
    std::string list;
    for (const auto& folder : folders)
        list += (list.empty() ? "" : ", ") +
                (folder.host.front().file.lexically_relative(common).string() + " (no '" + folder.name + "')");
    return common.string() + ": " + std::to_string(folders.size()) +
           " folders are not kernels: the host module of "
           "each defines no function named after its folder (" +
           not_a_kernel_consequence + "): " + list +
           "; define the function in each, or rename the files of folders not meant as kernels, or list them in "
           "the not-kernels key (cunumpy-kernels(5)) to say so once";
}

// The warning once a record has seen it named in full: a tree's not-kernel
// folders do not change from one command to the next, and a paragraph the
// user has read already, on every command, hides the warnings that are new.
// The same leading path, so a CI annotation lands where the full one did.
std::string not_kernels_reminder(const std::vector<KernelSource>& folders)
{
    std::string what = folders.size() == 1 ? "this folder is not a kernel"
                                           : std::to_string(folders.size()) + " folders are not kernels";
    return not_kernels_location(folders).string() + ": " + what +
           ", as named in full on an earlier run (the list changes: named again); list them in the not-kernels "
           "key (cunumpy-kernels(5)) to drop this line";
}

// The full warning the first time a record sees this set of folders, then the
// reminder. Without a record (dry runs, the runtime) always the full one.
std::string not_kernels_message(const std::vector<KernelSource>& folders, SourceRecord* record)
{
    std::string full = not_kernels_warning(folders);
    if (!record) return full;
    // Kept under a file of the set, as the record keeps only what its files' digests hold.
    std::string digest;
    try {
        digest = record->digest(folders.front().host.front().file);
    } catch (const SourceError&) {
        return full;
    }
    bool named_before = true;
    record->answer(digest, "not-kernels named 1 " + sha256_hex(full), [&] {
        named_before = false;
        return nlohmann::json(true);
    });
    return named_before ? not_kernels_reminder(folders) : full;
}

class Walker {
public:
    Walker(const Config& config, WalkWarning warn, SourceRecord* record = nullptr)
        : config_(config), warn_(warn), record_(record)
    {
    }

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
        if (!not_kernels_.empty() && warn_) warn_(not_kernels_message(not_kernels_, record_));
        not_kernels_.clear();
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

    // A folder's subfolders to walk, and its regular files named after it
    // (the only ones kernel_in asks for): the kernel test reads them from the
    // listing rather than stat'ing each name.
    struct Listing {
        std::vector<fs::path> folders;
        std::set<std::string> files;
        std::vector<std::string>
            other_names;  ///< `x` of an `x<host suffix>.py` beside `x<cuda suffix>`, x not the folder's name
    };

    static bool named_after(const std::string& file, const fs::path& folder)
    {
        return file.rfind(folder.filename().string(), 0) == 0;
    }

    Listing list(const fs::path& dir) const
    {
        Listing listing;
        std::set<std::string> host_stems, cuda_stems;
        const std::string host_ending = config_.host_suffix + ".py";
        std::error_code error;
        for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
            const std::string name = it->path().filename().string();
            std::error_code type_error;
            if (it->is_directory(type_error)) {
                if (!is_skipped_dir(name)) listing.folders.push_back(it->path());
                continue;
            }
            if (!it->is_regular_file(type_error)) continue;
            if (named_after(name, dir)) listing.files.insert(name);
            if (name.size() > host_ending.size() && name.ends_with(host_ending))
                host_stems.insert(name.substr(0, name.size() - host_ending.size()));
            if (name.size() > config_.cuda_suffix.size() && name.ends_with(config_.cuda_suffix))
                cuda_stems.insert(name.substr(0, name.size() - config_.cuda_suffix.size()));
        }
        if (error) throw SourceError("cannot list " + dir.string() + ": " + error.message());
        std::sort(listing.folders.begin(), listing.folders.end());
        for (const auto& stem : host_stems)
            if (stem != dir.filename().string() && cuda_stems.count(stem)) listing.other_names.push_back(stem);
        return listing;
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
        Listing listing = list(dir);
        auto in_listing_or_above = [&](const fs::path& path) {
            std::string name = path.filename().string();
            bool listed = path.parent_path() == dir && named_after(name, dir);
            // What no listing answers: each kernel asks for the `__init__.py` of every
            // folder up to its top package, and kernels share those folders.
            return listed ? listing.files.count(name) > 0 : files_above_.contains(path);
        };
        auto candidate = kernel_in(dir, config_, in_listing_or_above);
        std::size_t kernels_before = kernels_seen_;
        for (const auto& child : listing.folders) visit(child);
        if (candidate && kernels_seen_ == kernels_before) add_kernel(std::move(*candidate));
        if (!candidate && warn_)
            for (const auto& name : listing.other_names) warn_(renamed_folder_warning(dir, name));
    }

    // A kernel folder renamed without its files (or the reverse): cunumpy
    // takes the kernel's name from the folder, finds no kernel here and says
    // nothing, so the kernel would quietly leave the catalog.
    std::string renamed_folder_warning(const fs::path& dir, const std::string& name) const
    {
        std::string folder = dir.filename().string();
        return dir.string() + ": holds " + name + config_.host_suffix + ".py and " + name + config_.cuda_suffix +
               ", but cunumpy takes a kernel's name from its folder, so this folder is no kernel (it would need " +
               folder + config_.host_suffix + ".py); rename the folder to '" + name + "', or the files after '" +
               folder + "'";
    }

    void add_kernel(KernelSource kernel)
    {
        bool declared = declared_not_a_kernel(kernel);
        if (binds_no_kernel(kernel, record_)) {
            if (!declared) not_kernels_.push_back(std::move(kernel));
            return;
        }
        if (declared && warn_)
            warn_(kernel.host.front().file.string() + ": defines " + kernel.name +
                  "(), so this folder is a kernel "
                  "(cunumpy takes it as one), though the not-kernels key of " +
                  config_.source_file.string() + " lists it; remove it from not-kernels");
        if (kernel.misspelled_cuda_file && warn_)
            warn_(kernel.misspelled_cuda_file->string() +
                  ": not taken as the CUDA kernel: cunumpy reads <name> + "
                  "cuda_suffix literally, here '" +
                  kernel.name + config_.cuda_suffix + "'; set cuda-suffix = \"" + config_.cuda_suffix +
                  ".cu\" (or --cuda-suffix " + config_.cuda_suffix +
                  ".cu), as from_package's "
                  "cuda_suffix must be too");
        if (!pyccel_can_build(kernel.name) && warn_)
            warn_(kernel.folder.string() + ": kernel name '" + kernel.name +
                  "' is not ASCII: cunumpy imports it, "
                  "but Pyccel cannot build it, so its host build is skipped and cunumpy runs the uncompiled Python "
                  "version. Rename the folder and its files with ASCII letters, digits and _ to compile it");
        std::size_t limit = max_kernel_name_length(config_.host_suffix);
        if (config_.check_name_length && kernel.name.size() > limit && warn_) {
            std::string wrapper = "bind_c_" + kernel.name + config_.host_suffix;
            warn_(kernel.host.front().file.string() + ": kernel name '" + kernel.name +
                  "' gives Pyccel's Fortran wrapper "
                  "module '" +
                  wrapper + "' (" + std::to_string(wrapper.size()) +
                  " characters), longer than "
                  "Fortran's limit of " +
                  std::to_string(fortran_name_limit) + "; shorten the name to at most " + std::to_string(limit) +
                  " characters, or set check-name-length = false when you build with the "
                  "C backend");
        }
        ++kernels_seen_;
        // try_emplace moves `kernel` only when it inserts: a duplicate is intact for the warning.
        auto [first, added] = found_.try_emplace(kernel.module, std::move(kernel));
        if (!added && warn_) warn_(duplicate_module_warning(kernel, first->second));
    }

    bool declared_not_a_kernel(const KernelSource& kernel) const
    {
        fs::path folder = kernel.folder.lexically_normal();
        return std::find(config_.not_kernels.begin(), config_.not_kernels.end(), folder) != config_.not_kernels.end();
    }

    const Config& config_;
    WalkWarning warn_;
    SourceRecord* record_;
    std::set<std::pair<dev_t, ino_t>> visited_;
    std::map<std::string, KernelSource> found_;
    std::vector<KernelSource> not_kernels_;  ///< folders whose host module binds no function of their name
    std::size_t kernels_seen_ = 0;           ///< kernel folders walked, those of a module found already included
    util::RegularFiles files_above_;
};

}  // namespace

bool pyccel_can_build(const std::string& name)
{
    auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    auto tail = [&](char c) { return head(c) || (c >= '0' && c <= '9'); };
    return !name.empty() && head(name[0]) && std::all_of(name.begin() + 1, name.end(), tail);
}

std::size_t max_kernel_name_length(const std::string& host_suffix)
{
    std::size_t taken = std::string("bind_c_").size() + host_suffix.size();
    return taken < fortran_name_limit ? fortran_name_limit - taken : 0;
}

std::string cuda_file_name(const std::string& name, const Config& config) { return name + config.cuda_suffix; }

std::vector<fs::path> KernelSource::include_dirs(const Config& config) const
{
    std::vector<fs::path> dirs = {folder, source_root};
    dirs.insert(dirs.end(), config.include_dirs.begin(), config.include_dirs.end());
    return dirs;
}

std::string duplicate_module_warning(const KernelSource& left_out, const KernelSource& kept)
{
    return left_out.folder.string() + ": kernel module '" + left_out.module + "' was found already in " +
           kept.folder.string() +
           "; this one is left out (Python imports one module of a name, and the cache "
           "names entries by module): give one tree's top-level package another name, or pass the trees to "
           "separate runs";
}

WalkWarning caller_walk_warning(WalkWarning warn)
{
    if (!warn) return warn;
    return [warn = std::move(warn)](const std::string& message) {
        util::run_caller_code([&] { warn(util::printable(message)); });
    };
}

std::vector<KernelSource> find_kernels(const std::vector<fs::path>& paths, const Config& config, WalkWarning warn)
{
    return util::at_library_surface(
        "find_kernels", [&] { return find_kernels(paths, config, caller_walk_warning(std::move(warn)), nullptr); });
}

std::vector<KernelSource> find_kernels(const std::vector<fs::path>& paths, const Config& config, WalkWarning warn,
                                       SourceRecord* record)
{
    Walker walker(config, warn, record);
    if (paths.empty()) walker.add_path(fs::current_path());
    for (const auto& path : paths) walker.add_path(path);
    return walker.take();
}

std::optional<KernelSource> kernel_of_file(const fs::path& file, const Config& config)
{
    return util::at_library_surface("kernel_of_file", [&] { return kernel_of_file(file, config, nullptr); });
}

std::optional<KernelSource> kernel_of_file(const fs::path& file, const Config& config, SourceRecord* record)
{
    std::error_code error;
    fs::path folder = fs::absolute(file, error).lexically_normal().parent_path();
    if (folder.filename() == "__pyccel__") folder = folder.parent_path();
    auto kernel = kernel_in(folder, config, is_file);
    if (!kernel || binds_no_kernel(*kernel, record)) return std::nullopt;
    // The walk's rule: a folder holding kernel folders is a package.
    Walker walker(config, {}, record);
    walker.add_path(folder);
    auto below = walker.take();
    if (below.size() == 1 && below.front().folder == kernel->folder) return kernel;
    return std::nullopt;
}

}  // namespace ck
