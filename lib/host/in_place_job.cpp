#include "host/in_place_job.hpp"

#include "host/host_compile.hpp"
#include "host/host_library.hpp"
#include "cache/in_place_record.hpp"
#include "host/pyccel_workspace.hpp"
#include "util/temporary_name.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/atomic_file.hpp"
#include "util/elapsed.hpp"
#include "util/file_util.hpp"
#include "util/temporary_dir.hpp"
#include "util/utc_time.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

const char* const record_suffix = ".cunumpy-kernels.json";

// The files of one Pyccel run below `output`, relative to it: the extension,
// the host library (C backend) and every regular file in __pyccel__/ but the
// lock files and the links to imported stubs.
std::vector<std::string> built_files(const fs::path& output, const std::string& extension,
                                     const std::optional<fs::path>& library)
{
    std::vector<std::string> files = {extension};
    if (library) files.push_back(library->lexically_relative(output).string());
    std::error_code error;
    for (fs::recursive_directory_iterator it(output / "__pyccel__", error), end; !error && it != end;
         it.increment(error)) {
        if (it->is_symlink() || !it->is_regular_file() || it->path().extension() == ".lock") continue;
        files.push_back(it->path().lexically_relative(output).string());
    }
    if (error) throw CacheError("cannot list " + (output / "__pyccel__").string() + ": " + error.message());
    std::sort(files.begin() + 1, files.end());
    return files;
}

// Readers see the old file or the new one, never a part, even across file systems.
void install_file(const fs::path& from, const fs::path& to)
{
    std::error_code error;
    fs::create_directories(to.parent_path(), error);
    if (error) throw CacheError("cannot create " + to.parent_path().string() + ": " + error.message());
    util::AtomicFile file(to);
    file.copy_from(from);
    file.commit();
}

// The module's own files among `files`: the extension, its host library, and
// in __pyccel__/ those named after the module (its stub, sources, objects,
// wrapper; with the Fortran backend bind_c_<stem>.mod and the
// bind_c_<stem>_wrapper source and object).
std::vector<std::string> own_files(const std::vector<std::string>& files, const std::string& stem)
{
    std::vector<std::string> own = {files.front()};
    for (const auto& file : files) {
        fs::path path(file);
        std::string name = path.filename().string();
        if (path.parent_path().empty() && name == host_library_file(stem)) own.push_back(file);
        bool in_pyccel = path.parent_path() == "__pyccel__";
        if (in_pyccel &&
            (name.rfind(stem + ".", 0) == 0 || name.rfind(stem + "_wrapper.", 0) == 0 ||
             name.rfind("bind_c_" + stem + ".", 0) == 0 || name.rfind("bind_c_" + stem + "_wrapper.", 0) == 0))
            own.push_back(file);
    }
    return own;
}

// Pyccel leaves `<file>.lock` beside files it compiles or links, ours included.
void remove_file_and_lock(const fs::path& path)
{
    std::error_code ignored;
    if (!fs::is_symlink(path, ignored)) fs::remove(path, ignored);
    fs::path lock = path;
    lock += ".lock";
    fs::remove(lock, ignored);
}

// Copies a killed install left beside `files` and its record (AtomicFile's
// `.<name>.<host>.<pid>.<n>.<random>`) by a process that is gone.
void remove_stale_install_files(const fs::path& folder, const std::vector<std::string>& files)
{
    std::set<fs::path> folders = {folder / "__pyccel__"};
    std::set<std::string> names;
    for (const auto& file : files) {
        folders.insert((folder / file).parent_path());
        names.insert(fs::path(file).filename().string());
    }
    for (const auto& dir : folders) {
        std::error_code error;
        for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
            std::string name = it->path().filename().string();
            bool stale = false;
            if (name.size() > 1 && name[0] == '.') {
                auto dot = name.find('.', 1);
                while (dot != std::string::npos && !stale) {
                    std::string target = name.substr(1, dot - 1);
                    if (names.count(target) || target.ends_with(record_suffix))
                        stale = is_stale_temporary(it->path(), name.substr(dot + 1), 24 * 3600.0);
                    dot = name.find('.', dot + 1);
                }
            }
            std::error_code ignored;
            if (stale) fs::remove(it->path(), ignored);
        }
    }
}

class InPlaceJobRun {
public:
    InPlaceJobRun(const HostPlan& plan, std::size_t index, const HostBuildTools& tools, const EntryStore& scratch)
        : plan_(plan),
          index_(index),
          module_(plan.modules[index]),
          job_(plan.jobs[index]),
          tools_(tools),
          scratch_(scratch),
          result_(in_place_base_result(plan, index))
    {
    }

    JobResult run()
    {
        try {
            compile_and_install();
        } catch (const Error& error) {
            fail(error.what());
        }
        result_.seconds = elapsed();
        return std::move(result_);
    }

private:
    void compile_and_install()
    {
        util::TemporaryDir workspace(workspace_path(scratch_.root()));
        fs::path output_root = workspace.path() / "out";
        // Imports are built first, each beside its source.
        auto imported = [this](std::size_t i) { return plan_.modules[i].file.parent_path(); };
        PyccelModuleBuild built =
            compile_host_module(plan_, index_, tools_, workspace.path(), output_root, folder(), imported);
        result_.log = built.log;
        if (!built.ok) return fail(built.problem);
        install(built.output, built_files(built.output, built.extension.filename().string(), built.library));
    }

    // The installed host library's stamp and digest, which the runtime
    // checks before loading it and the next build before calling it a hit.
    void record_library(InPlaceRecord& record) const
    {
        std::string name = host_library_file(module_stem(module_));
        if (std::find(record.files.begin(), record.files.end(), name) == record.files.end()) return;
        auto stamp = file_stamp(folder() / name);
        if (!stamp) throw CacheError("cannot read " + (folder() / name).string() + " after writing it");
        record.library = name;
        record.library_size = stamp->size;
        record.library_mtime_ns = stamp->mtime_ns;
        record.library_sha256 = sha256_file(folder() / name);
    }

    // The record is emptied first, so that an interruption between the
    // renames leaves a module that the next build rebuilds; the extension
    // goes last, as importers look for it first.
    void install(const fs::path& output, const std::vector<std::string>& files)
    {
        fs::path record_path = in_place_record_path(folder(), module_stem(module_));
        InPlaceRecord record;
        record.module = module_.name;
        record.inputs = job_.inputs;
        record.extension = files.front();
        record.files = files;
        auto previous = read_in_place_record(record_path);
        if (previous) record.files = merged(previous->files, files);
        remove_stale_install_files(folder(), record.files);
        std::error_code error;
        fs::create_directories(record_path.parent_path(), error);
        if (error) throw CacheError("cannot create " + record_path.parent_path().string() + ": " + error.message());
        write_in_place_record(record_path, record);
        for (std::size_t i = files.size(); i-- > 0;) install_file(output / files[i], folder() / files[i]);
        fs::path extension = folder() / files.front();
        auto stamp = file_stamp(extension);
        if (!stamp) throw CacheError("cannot read " + extension.string() + " after writing it");
        record.key = job_.key;
        record.files = files;
        record.own_files = own_files(files, module_stem(module_));
        // What an earlier build of ours wrote and this one did not (another language): gone with it.
        if (previous)
            for (const auto& file : previous->files)
                if (std::find(files.begin(), files.end(), file) == files.end()) remove_file_and_lock(folder() / file);
        record.size = stamp->size;
        record.mtime_ns = stamp->mtime_ns;
        record.sha256 = sha256_file(extension);
        record_library(record);
        record.built_at = util::utc_now();
        record.seconds = elapsed();
        write_in_place_record(record_path, record);
        util::fsync_dir(folder() / "__pyccel__");
        util::fsync_dir(folder());
        scratch_.forget_failure("in-place", result_.module, "host");
        result_.artifacts = {extension};
        result_.state = JobState::built;
    }

    // While files are replaced, clean must find the old build's files and the new.
    static std::vector<std::string> merged(const std::vector<std::string>& a, const std::vector<std::string>& b)
    {
        std::set<std::string> all(a.begin(), a.end());
        all.insert(b.begin(), b.end());
        return {all.begin(), all.end()};
    }

    fs::path folder() const { return module_.file.parent_path(); }

    void fail(const std::string& message)
    {
        result_.state = JobState::failed;
        if (!message.empty()) result_.log += (result_.log.empty() ? "" : "\n") + message;
        scratch_.remember_failure("in-place", result_.module, "host", job_.key, result_.log);
    }

    double elapsed() const { return util::seconds_since(start_); }

    const HostPlan& plan_;
    std::size_t index_;
    const HostModule& module_;
    const HostJob& job_;
    const HostBuildTools& tools_;
    const EntryStore& scratch_;
    JobResult result_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Every record below `folder`, in __pyccel__/ folders of any depth.
void find_records(const fs::path& folder, std::vector<fs::path>& records)
{
    std::error_code error;
    for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (it->is_directory() && (name == "__pycache__" || (name.size() > 1 && name[0] == '.'))) {
            it.disable_recursion_pending();
            continue;
        }
        if (name.ends_with(record_suffix) && it->path().parent_path().filename() == "__pyccel__")
            records.push_back(it->path());
    }
    if (error) throw SourceError("cannot list " + folder.string() + ": " + error.message());
}

void remove_listed(const fs::path& path, bool dry_run, std::vector<fs::path>& removed)
{
    std::error_code error;
    if (!fs::is_regular_file(fs::symlink_status(path, error))) return;
    removed.push_back(path);
    if (dry_run) return;
    fs::remove(path, error);
    if (error) throw CacheError("cannot remove " + path.string() + ": " + error.message());
}

// Empty folders below `pyccel` (cwrapper/, math/), then `pyccel` itself.
void remove_empty_folders(const fs::path& pyccel)
{
    std::error_code error;
    std::vector<fs::path> folders;
    for (fs::recursive_directory_iterator it(pyccel, error), end; !error && it != end; it.increment(error))
        if (it->is_directory() && !it->is_symlink()) folders.push_back(it->path());
    std::sort(folders.rbegin(), folders.rend());
    folders.push_back(pyccel);
    for (const auto& dir : folders)
        if (fs::is_empty(dir, error)) fs::remove(dir, error);
}

}  // namespace

JobResult in_place_base_result(const HostPlan& plan, std::size_t index)
{
    const HostModule& module = plan.modules[index];
    JobResult result;
    result.module = host_label(module);
    result.kernel = module.kernel ? module.kernel->name : "";
    result.kind = "in-place";
    result.target = "host";
    result.key = plan.jobs[index].key;
    result.host_module = module.name;
    result.entry = module.file.parent_path();
    return result;
}

JobResult run_in_place_job(const HostPlan& plan, std::size_t index, const HostBuildTools& tools,
                           const EntryStore& scratch)
{
    return InPlaceJobRun(plan, index, tools, scratch).run();
}

std::vector<fs::path> clean_in_place(const std::vector<fs::path>& folders, bool dry_run)
{
    std::vector<fs::path> records;
    for (const auto& given : folders) {
        std::error_code error;
        if (!fs::is_directory(given, error)) throw UsageError(given.string() + ": not a folder");
        find_records(util::absolute_normal(given), records);
    }
    std::sort(records.begin(), records.end());
    records.erase(std::unique(records.begin(), records.end()), records.end());
    std::vector<fs::path> removed;
    for (const auto& record_path : records) {
        fs::path folder = record_path.parent_path().parent_path();
        // Another tool's build replaced ours: its files stay, only our record goes.
        auto record = read_in_place_record(record_path);
        if (record && (record->key.empty() || record_describes_extension(*record, folder))) {
            for (const auto& file : record->files) {
                fs::path path = (folder / file).lexically_normal();
                // A record lists files of its own folder; anything else is not ours to remove.
                if (path.lexically_relative(folder).string().rfind("..", 0) == 0) continue;
                remove_listed(path, dry_run, removed);
                fs::path lock = path;
                lock += ".lock";  // Pyccel's, beside a file it compiled or linked
                remove_listed(lock, dry_run, removed);
            }
            if (!dry_run) remove_stale_install_files(folder, record->files);
        }
        remove_listed(record_path, dry_run, removed);
    }
    if (!dry_run)
        for (const auto& record_path : records) remove_empty_folders(record_path.parent_path());
    std::sort(removed.begin(), removed.end());
    removed.erase(std::unique(removed.begin(), removed.end()), removed.end());
    return removed;
}

}  // namespace ck
