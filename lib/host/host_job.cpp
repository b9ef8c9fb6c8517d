#include "host/host_job.hpp"

#include "host/host_compile.hpp"
#include "host/pyccel_workspace.hpp"

#include "host/cunumpy_entry.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/elapsed.hpp"
#include "util/file_util.hpp"
#include "util/temporary_dir.hpp"
#include "util/utc_time.hpp"

#include <chrono>
#include <optional>

namespace ck {

namespace fs = std::filesystem;

namespace {

class HostJobRun {
public:
    HostJobRun(const HostPlan& plan, std::size_t index, const HostBuildTools& tools, const EntryStore& store)
        : plan_(plan),
          index_(index),
          module_(plan.modules[index]),
          job_(plan.jobs[index]),
          tools_(tools),
          store_(store),
          result_(host_base_result(plan, index, store))
    {
    }

    JobResult run()
    {
        try {
            compile_and_publish();
        } catch (const InputChangedError& error) {
            fail(error.what(), false);  // not a failure of these inputs: not remembered
        } catch (const Error& error) {
            fail(error.what());
        }
        result_.seconds = elapsed();
        return std::move(result_);
    }

private:
    void compile_and_publish()
    {
        util::TemporaryDir workspace(workspace_path(store_.root()));
        EntryWriter writer(store_.root(), "host", job_.key);
        // Imports are built first, each into its own entry.
        auto imported = [this](std::size_t i) {
            return host_build_folder(store_, plan_.jobs[i].key, plan_.modules[i]);
        };
        PyccelModuleBuild built = compile_host_module(plan_, index_, tools_, workspace.path(), writer.folder(),
                                                      host_build_folder(store_, job_.key, module_), imported);
        result_.log = built.log;
        if (!built.ok) return fail(built.problem);
        sync_tree(writer.folder());
        publish(writer, built.extension, built.library);
    }

    void publish(EntryWriter& writer, const fs::path& extension, const std::optional<fs::path>& library)
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
        if (library) {
            std::string library_bytes = util::read_file(*library);
            manifest.artifacts.push_back({library->lexically_relative(writer.folder()).string(), "host-library",
                                          sha256_hex(library_bytes), library_bytes.size()});
        }
        manifest.built_at = util::utc_now();
        manifest.seconds = elapsed();
        manifest.log = result_.log;
        result_.entry = writer.commit(manifest);
        result_.artifacts = {result_.entry / relative};
        fs::path link_target = host_build_folder(store_, job_.key, module_).lexically_relative(store_.root());
        point_cunumpy_entry(store_.root(), job_.cunumpy_name, link_target);
        store_.remember_latest("host", host_label(module_), "host", job_.key);
        store_.record_use("host", job_.key);  // so the next build's first hit changes no folder it rests on
        store_.forget_failure("host", host_label(module_), "host");
        result_.state = JobState::built;
    }

    void fail(const std::string& message, bool remembered = true)
    {
        result_.state = JobState::failed;
        if (!message.empty()) result_.log += (result_.log.empty() ? "" : "\n") + message;
        if (remembered) store_.remember_failure("host", host_label(module_), "host", job_.key, result_.log);
    }

    double elapsed() const { return util::seconds_since(start_); }

    const HostPlan& plan_;
    std::size_t index_;
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
    return package_folder(store.entry_dir("host", key), module);
}

std::string host_artifact_file(const HostModule& module, const std::string& ext_suffix)
{
    return (module.relative.parent_path() / (module_stem(module) + ext_suffix)).string();
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

JobResult host_hit_result(const HostPlan& plan, std::size_t index, const HostBuildTools& tools, const EntryStore& store)
{
    JobResult result = host_base_result(plan, index, store);
    result.state = JobState::hit;
    result.entry = store.entry_dir("host", result.key);
    result.artifacts = {host_build_folder(store, result.key, plan.modules[index]) /
                        (module_stem(plan.modules[index]) + tools.ext_suffix)};
    return result;
}

}  // namespace ck
