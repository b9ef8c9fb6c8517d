#include "host/pyccel_workspace.hpp"

#include "compilers/compiler_environment.hpp"

#include "util/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace ck {

namespace fs = std::filesystem;

namespace {

// Loads the new extension as PyccelCache does (spec_from_file_location), in
// a child: a build that fails to import or crashes the interpreter is never
// published.
constexpr const char* import_check_script =
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location(sys.argv[1], sys.argv[2])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(module)\n";

void write_workspace_file(const fs::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    if (!out.flush()) throw CacheError("cannot write " + path.string() + ": " + util::errno_message(errno));
}

std::string replace_once_or_more(std::string text, const std::string& from, const std::string& to, bool* found)
{
    *found = false;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
        *found = true;
    }
    return text;
}

}  // namespace

fs::path workspace_path(const fs::path& root) { return root / temporary_folder_name / unique_temporary_name(); }

std::string module_stem(const HostModule& module) { return module.relative.stem().string(); }

fs::path package_folder(const fs::path& root, const HostModule& module)
{
    return module.relative.has_parent_path() ? root / module.relative.parent_path() : root;
}

void copy_module(const HostModule& module, const fs::path& sources)
{
    fs::path copy = sources / module.relative;
    std::error_code error;
    fs::create_directories(copy.parent_path(), error);
    if (error) throw CacheError("cannot create " + copy.parent_path().string() + ": " + error.message());
    for (fs::path folder = copy.parent_path(); folder != sources; folder = folder.parent_path())
        if (!fs::exists(folder / "__init__.py", error)) write_workspace_file(folder / "__init__.py", "");
    write_workspace_file(copy, planned_source(module));
    const struct timespec times[2] = {{1, 0}, {1, 0}};
    if (::utimensat(AT_FDCWD, copy.c_str(), times, 0) != 0)
        throw CacheError("cannot date " + copy.string() + ": " + util::errno_message(errno));
}

void relocate_wrapper_header(const fs::path& built_in, const fs::path& lives_in, const std::string& stem)
{
    fs::path header = built_in / "__pyccel__" / (stem + "_wrapper.h");
    bool found = false;
    std::string text = replace_once_or_more(util::read_file(header), "\"" + built_in.string() + "\"",
                                            "\"" + lives_in.string() + "\"", &found);
    if (!found)
        throw CacheError(header.string() + " does not name the build folder " + built_in.string() +
                         "; this Pyccel lays out its wrapper differently from the checked 2.2 series");
    fs::remove(header);
    util::write_file_synced(header, text);
}

void sync_tree(const fs::path& root)
{
    std::error_code error;
    for (fs::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
        if (it->is_symlink()) continue;
        util::UniqueFd fd(::open(it->path().c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.valid()) ::fsync(fd.get());
    }
    util::fsync_dir(root);
}

std::string import_check(const fs::path& python, const fs::path& extension, const std::string& stem,
                         const fs::path& working_dir)
{
    auto result = util::run_process({python.string(), "-c", import_check_script, stem, extension.string()}, working_dir,
                                    {}, run_variables());
    if (result.exit_code == 0) return "";
    std::string how = result.exit_code > 128
                          ? "crashed the interpreter (signal " + std::to_string(result.exit_code - 128) + ")"
                          : "failed (exit " + std::to_string(result.exit_code) + ")";
    return "importing the new build " + extension.string() + " in " + python.string() + " " + how +
           "; nothing was published:\n" + result.output;
}

std::string python_path_with(const fs::path& first)
{
    const char* existing = std::getenv("PYTHONPATH");
    return first.string() + (existing && *existing ? ":" + std::string(existing) : "");
}

}  // namespace ck
