#include "build/host_job.hpp"

#include "cache/cunumpy_entry.hpp"
#include "cache/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"
#include "util/utc_time.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
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

// The copies Pyccel compiles from, inside the cache root so that a killed
// build's leftovers are removed like any other temporary folder.
class Workspace {
public:
    explicit Workspace(const fs::path& root) : path_(root / temporary_folder_name / unique_temporary_name())
    {
        std::error_code error;
        fs::create_directories(path_ / "src", error);
        if (error) throw CacheError("cannot create " + path_.string() + ": " + error.message());
    }
    ~Workspace()
    {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;

    const fs::path& path() const { return path_; }
    fs::path sources() const { return path_ / "src"; }

private:
    fs::path path_;
};

std::string stem_of(const HostModule& module)
{
    return module.relative.stem().string();
}

void write_workspace_file(const fs::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    if (!out.flush()) throw CacheError("cannot write " + path.string() + ": " + util::errno_message(errno));
}

// A copy of `module` below `sources`, dated 1970: Pyccel refuses a stub
// older than its module's source, and the stubs come from earlier builds.
void copy_module(const HostModule& module, const fs::path& sources)
{
    fs::path copy = sources / module.relative;
    std::error_code error;
    fs::create_directories(copy.parent_path(), error);
    if (error) throw CacheError("cannot create " + copy.parent_path().string() + ": " + error.message());
    // Pyccel imports dotted modules to find them: empty packages keep the
    // user's __init__.py (and what it imports) out of the build.
    for (fs::path folder = copy.parent_path(); folder != sources; folder = folder.parent_path())
        if (!fs::exists(folder / "__init__.py", error)) write_workspace_file(folder / "__init__.py", "");
    write_workspace_file(copy, module.source);
    const struct timespec times[2] = {{1, 0}, {1, 0}};
    if (::utimensat(AT_FDCWD, copy.c_str(), times, 0) != 0)
        throw CacheError("cannot date " + copy.string() + ": " + util::errno_message(errno));
}

// Links the stub of every imported module where Pyccel looks for it,
// relative to the output folder, into that module's own entry.
void link_imported_stubs(const HostPlan& plan, const HostJob& job, const fs::path& staging, const EntryStore& store)
{
    for (std::size_t imported : job.closure) {
        const HostModule& dependency = plan.modules[imported];
        fs::path stub = fs::path(dependency.relative.parent_path()) / "__pyccel__" / (stem_of(dependency) + ".pyi");
        fs::path target = store.entry_dir("host", plan.jobs[imported].key) / stub;
        std::error_code error;
        if (!fs::is_regular_file(target, error))
            throw CacheError("the build of imported module " + dependency.name + " is missing: " + target.string());
        fs::create_directories((staging / stub).parent_path(), error);
        fs::create_symlink(target, staging / stub, error);
        if (error) throw CacheError("cannot link " + (staging / stub).string() + ": " + error.message());
    }
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

// Pyccel writes the folder it built in into the module's wrapper header;
// importers compile it into their extensions. Make it the published folder.
void relocate_wrapper_header(const fs::path& built_in, const fs::path& published_in, const std::string& stem)
{
    fs::path header = built_in / "__pyccel__" / (stem + "_wrapper.h");
    bool found = false;
    std::string text = replace_once_or_more(util::read_file(header), "\"" + built_in.string() + "\"",
                                            "\"" + published_in.string() + "\"", &found);
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
    auto result = util::run_process({python.string(), "-c", import_check_script, stem, extension.string()}, working_dir);
    if (result.exit_code == 0) return "";
    std::string how = result.exit_code > 128 ? "crashed the interpreter (signal " +
                                                   std::to_string(result.exit_code - 128) + ")"
                                             : "failed (exit " + std::to_string(result.exit_code) + ")";
    return "importing the new build " + extension.string() + " in " + python.string() + " " + how +
           "; nothing was published:\n" + result.output;
}

std::string python_path_with(const fs::path& first)
{
    const char* existing = std::getenv("PYTHONPATH");
    return first.string() + (existing && *existing ? ":" + std::string(existing) : "");
}

class HostJobRun {
public:
    HostJobRun(const HostPlan& plan, std::size_t index, const HostBuildTools& tools, const EntryStore& store)
        : plan_(plan), module_(plan.modules[index]), job_(plan.jobs[index]), tools_(tools), store_(store),
          result_(host_base_result(plan, index, store))
    {
    }

    JobResult run()
    {
        try {
            compile_and_publish();
        } catch (const Error& error) {
            fail(error.what());
        }
        result_.seconds = elapsed();
        return std::move(result_);
    }

private:
    void compile_and_publish()
    {
        Workspace workspace(store_.root());
        for (std::size_t imported : job_.closure) copy_module(plan_.modules[imported], workspace.sources());
        copy_module(module_, workspace.sources());
        EntryWriter writer(store_.root(), "host", job_.key);
        link_imported_stubs(plan_, job_, writer.folder(), store_);
        fs::path output = writer.folder() / module_.relative.parent_path();
        std::error_code error;
        fs::create_directories(output, error);
        PyccelCompileRequest request{workspace.sources() / module_.relative, output, workspace.path(),
                                     tools_.language, job_.openmp, python_path_with(workspace.sources())};
        PyccelCompileOutput compiled = tools_.compiler->compile(request);
        result_.log = format_pyccel_log(compiled.output,
                                        {{workspace.sources().string() + "/", module_.source_root.string() + "/"}},
                                        module_.file.string());
        if (!compiled.ok) return fail("");
        fs::path extension = output / (stem_of(module_) + tools_.ext_suffix);
        if (!fs::is_regular_file(extension, error))
            return fail("Pyccel reported success but wrote no " + extension.string());
        fs::path published = host_build_folder(store_, job_.key, module_);
        relocate_wrapper_header(output, published, stem_of(module_));
        std::string import_problem = import_check(tools_.python, extension, stem_of(module_), workspace.path());
        if (!import_problem.empty()) return fail(import_problem);
        sync_tree(writer.folder());
        publish(writer, extension);
    }

    void publish(EntryWriter& writer, const fs::path& extension)
    {
        Manifest manifest;
        manifest.key = job_.key;
        manifest.kind = "host";
        manifest.module = module_.name;
        manifest.kernel = module_.kernel ? module_.kernel->name : "";
        manifest.target = "host";
        manifest.inputs = job_.inputs;
        std::string bytes = util::read_file(extension);
        fs::path relative = extension.lexically_relative(writer.folder());
        manifest.artifacts.push_back({relative.string(), "host", sha256_hex(bytes), bytes.size()});
        manifest.built_at = util::utc_now();
        manifest.seconds = elapsed();
        manifest.log = result_.log;
        result_.entry = writer.commit(manifest);
        result_.artifacts = {result_.entry / relative};
        fs::path link_target = host_build_folder(store_, job_.key, module_).lexically_relative(store_.root());
        point_cunumpy_entry(store_.root(), job_.cunumpy_name, link_target);
        store_.remember_latest("host", host_label(module_), "host", job_.key);
        store_.forget_failure("host", host_label(module_), "host");
        result_.state = JobState::built;
    }

    void fail(const std::string& message)
    {
        result_.state = JobState::failed;
        if (!message.empty()) result_.log += (result_.log.empty() ? "" : "\n") + message;
        store_.remember_failure("host", host_label(module_), "host", job_.key, result_.log);
    }

    double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

    const HostPlan& plan_;
    const HostModule& module_;
    const HostJob& job_;
    const HostBuildTools& tools_;
    const EntryStore& store_;
    JobResult result_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

fs::path host_build_folder(const EntryStore& store, const std::string& key, const HostModule& module)
{
    return store.entry_dir("host", key) / module.relative.parent_path();
}

std::string host_artifact_file(const HostModule& module, const std::string& ext_suffix)
{
    return (module.relative.parent_path() / (stem_of(module) + ext_suffix)).string();
}

JobResult host_base_result(const HostPlan& plan, std::size_t index, const EntryStore& store)
{
    const HostModule& module = plan.modules[index];
    JobResult result;
    result.module = host_label(module);
    result.kernel = module.kernel ? module.kernel->name : "";
    result.kind = "host";
    result.target = "host";
    result.key = plan.jobs[index].key;
    result.host_module = module.name;
    if (!plan.jobs[index].cunumpy_name.empty()) result.cunumpy_entry = store.root() / plan.jobs[index].cunumpy_name;
    return result;
}

JobResult run_host_job(const HostPlan& plan, std::size_t index, const HostBuildTools& tools, const EntryStore& store)
{
    return HostJobRun(plan, index, tools, store).run();
}

JobResult host_hit_result(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                          const EntryStore& store)
{
    JobResult result = host_base_result(plan, index, store);
    result.state = JobState::hit;
    result.entry = store.entry_dir("host", result.key);
    result.artifacts = {host_build_folder(store, result.key, plan.modules[index]) /
                        (stem_of(plan.modules[index]) + tools.ext_suffix)};
    return result;
}

}  // namespace ck
