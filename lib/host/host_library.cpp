#include "host/host_library.hpp"

#include "host/host_shim.hpp"

#include "compilers/compiler_environment.hpp"
#include "cunumpy_kernels/error.hpp"
#include "runtime/cached_host.hpp"
#include "util/dynamic_library.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <algorithm>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

// Pyccel 2.2's search (codegen/compiling/library_config.py), reduced to the
// two paths the shim needs: the headers and the static library.
constexpr const char* stc_script = R"py(
import importlib.resources, os, pathlib, subprocess, sys
family = sys.argv[1]
def show(root):
    headers = next(root.glob('**/stc/cspan.h'), None)
    library = next(root.glob('**/libstc.a'), None)
    if headers and library:
        print(headers.parent.parent)
        print(library)
        sys.exit(0)
def pkg_config(*arguments):
    result = subprocess.run(['pkg-config', *arguments, 'stc'], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None
try:
    if pkg_config('--max-version=6', '--atleast-version=5') is not None:
        include, libdir = pkg_config('--variable=includedir'), pkg_config('--variable=libdir')
        if include and libdir and (pathlib.Path(libdir) / 'libstc.a').exists():
            print(include)
            print(pathlib.Path(libdir) / 'libstc.a')
            sys.exit(0)
except OSError:
    pass
try:
    with importlib.resources.as_file(importlib.resources.files('pyccel.extensions.stc_install_' + family)) as root:
        show(pathlib.Path(root))
except ModuleNotFoundError:
    pass
home = pathlib.Path(os.environ.get('PYCCEL_CONFIG_HOME', pathlib.Path.home() / '.pyccel'))
if (home / family / 'STC').exists():
    show(home / family / 'STC')
sys.exit(3)
)py";

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> lines;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = std::min(text.find('\n', start), text.size());
        if (end > start) lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// Pyccel's support libraries of a module (`math/` with pyc_math_c), each a
// subfolder of its `__pyccel__/`; not `cwrapper/`, which needs Python.
std::vector<fs::path> support_folders(const fs::path& pyccel_folder)
{
    std::vector<fs::path> folders;
    std::error_code error;
    for (fs::directory_iterator it(pyccel_folder, error), end; !error && it != end; it.increment(error))
        if (it->is_directory() && it->path().filename() != "cwrapper") folders.push_back(it->path());
    std::sort(folders.begin(), folders.end());
    return folders;
}

// The module's own object (not its `_wrapper.o`, which needs Python) and its
// support objects, each support object once over all modules.
void add_objects(const PyccelBuiltModule& module, std::vector<fs::path>& objects, std::set<std::string>& support)
{
    objects.push_back(module.pyccel_folder / (module.stem + ".o"));
    for (const auto& folder : support_folders(module.pyccel_folder)) {
        std::vector<fs::path> found;
        std::error_code error;
        for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
            if (it->path().extension() == ".o") found.push_back(it->path());
        std::sort(found.begin(), found.end());
        for (const auto& object : found)
            if (support.insert(object.filename().string()).second) objects.push_back(object);
    }
}

// `-I` for the headers of every module and support library: the module's
// header includes those of its imports.
std::vector<std::string> include_flags(const HostLibraryRequest& request)
{
    std::vector<std::string> flags;
    auto add = [&](const PyccelBuiltModule& module) {
        flags.insert(flags.end(), {"-I", module.pyccel_folder.string()});
        for (const auto& folder : support_folders(module.pyccel_folder))
            flags.insert(flags.end(), {"-I", folder.string()});
    };
    add(request.module);
    for (const auto& imported : request.imported) add(imported);
    if (request.stc) flags.insert(flags.end(), {"-I", request.stc->include_dir.string()});
    return flags;
}

std::string run_step(const std::vector<std::string>& argv, const fs::path& cwd, const std::string& what)
{
    auto result = util::run_process(argv, cwd, {}, run_variables());
    if (result.exit_code == 0) return "";
    std::string command;
    for (const auto& arg : argv) command += (command.empty() ? "" : " ") + arg;
    return what + " failed (exit " + std::to_string(result.exit_code) + "): " + command + "\n" + result.output;
}

std::string load_check(const fs::path& library)
{
    std::string error;
    auto loaded = util::DynamicLibrary::open_first({library.string()}, &error);
    if (!loaded.loaded()) return "the host library does not load: " + error;
    if (!loaded.symbol("ck_host_abi_version") || !loaded.symbol("ck_host_description"))
        return "the host library " + library.string() + " lacks the shim's symbols";
    return "";
}

}  // namespace

std::string host_library_file(const std::string& stem) { return stem + std::string(host_library_suffix); }

std::optional<StcInstall> find_stc(const fs::path& python, const std::string& compiler_family, std::string* why)
{
    auto result = util::run_process({python.string(), "-c", stc_script, compiler_family}, {}, {}, run_variables());
    auto lines = lines_of(result.output);
    if (result.exit_code != 0 || lines.size() != 2) {
        if (why)
            *why = "Pyccel's STC was not found by " + python.string() +
                   " (neither through pkg-config, in Pyccel's wheel nor in ~/.pyccel): " + result.output;
        return std::nullopt;
    }
    return StcInstall{lines[0], lines[1]};
}

const std::optional<StcInstall>& StcLocator::get(std::string* why) const
{
    std::call_once(once_, [this] { found_ = find_stc(python_, family_, &why_); });
    if (!found_ && why) *why = why_;
    return found_;
}

HostLibraryBuild build_host_library(const HostLibraryRequest& request)
{
    HostLibraryBuild build;
    const std::string& stem = request.module.stem;
    fs::path stub = request.module.pyccel_folder / (stem + ".pyi");
    std::string stub_text;
    try {
        stub_text = util::read_file(stub);
    } catch (const Error& error) {
        build.problem = "cannot read Pyccel's stub: " + std::string(error.what());
        return build;
    }
    if (request.backend == ShimBackend::c && !request.stc) {
        build.problem = "the C backend's host library needs Pyccel's STC";
        return build;
    }
    StubReading reading = read_pyccel_stub(stub_text);
    for (const auto& skip : reading.skipped) build.skipped.push_back("kernel '" + skip.name + "': " + skip.reason);
    build.description = host_library_description(reading);
    fs::path shim = request.scratch / (stem + ".ck-host.c");
    fs::path shim_object = request.scratch / (stem + ".ck-host.o");
    fs::path exports = request.scratch / (stem + ".ck-host.map");
    util::write_file(shim, generate_host_shim(stem, reading, request.backend));
    util::write_file(exports, "{ global: ck_host_*; local: *; };\n");
    std::vector<std::string> compile = {"gcc", "-O2", "-fPIC", "-c"};
    for (auto& flag : include_flags(request)) compile.push_back(std::move(flag));
    compile.insert(compile.end(), {shim.string(), "-o", shim_object.string()});
    build.problem = run_step(compile, request.scratch, "compiling the host library's shim");
    if (!build.problem.empty()) return build;
    std::vector<fs::path> objects = {shim_object};
    std::set<std::string> support;
    add_objects(request.module, objects, support);
    // Only the module's own bind_c wrappers: the shim calls no import's.
    if (request.backend == ShimBackend::fortran)
        objects.push_back(request.module.pyccel_folder / ("bind_c_" + stem + "_wrapper.o"));
    for (const auto& imported : request.imported) add_objects(imported, objects, support);
    std::string linker = request.backend == ShimBackend::fortran ? "gfortran" : "gcc";
    std::vector<std::string> link = {
        linker, "-shared", "-o", request.output.string(), "-Wl,-z,defs", "-Wl,--version-script=" + exports.string()};
    for (const auto& object : objects) link.push_back(object.string());
    if (request.stc) link.push_back(request.stc->library.string());
    link.push_back("-lm");
    if (request.openmp) link.push_back("-fopenmp");
    build.problem = run_step(link, request.scratch, "linking the host library");
    if (!build.problem.empty()) return build;
    build.problem = load_check(request.output);
    build.ok = build.problem.empty();
    return build;
}

}  // namespace ck
