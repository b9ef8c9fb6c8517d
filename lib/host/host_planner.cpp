#include "host/host_planner.hpp"
#include "util/json_text.hpp"
#include "explain/input_change.hpp"

#include "host/cunumpy_names.hpp"
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "host/python_imports.hpp"
#include "scheduler/job_graph.hpp"
#include "util/byte_text.hpp"
#include "util/file_util.hpp"
#include "util/regular_files.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What planning needs from a module's bytes; a pure function of them, so a
// SourceRecord may answer it for unchanged files.
constexpr const char* module_facts_question = "host-module/1";

json module_facts(const std::string& bytes)
{
    json imports = json::array();
    for (const auto& import : scan_python_imports(bytes)) imports.push_back({import.module, import.line});
    return {{"text_sha256", sha256_hex(python_source_text(bytes))},
            {"openmp_runtime", uses_openmp_runtime(bytes)},
            {"imports", imports}};
}

// cunumpy's name for the module's build: a SHA-256 stream over its text and
// the toolchain's facts, so not formed from a digest; remembered per toolchain
// under the digest the module was planned with (its text read again only on
// a miss, and refused if it changed since). Throws SourceError as planned_source.
std::string cunumpy_key_of(const HostModule& module, const HostToolchain& toolchain, bool openmp, SourceRecord* record)
{
    auto key = [&] {
        return cunumpy_build_key(python_source_text(planned_source(module)), toolchain.language, openmp,
                                 toolchain.python);
    };
    if (!record) return key();
    std::string question =
        util::json_text(json::array({"cunumpy-key/1", toolchain.language, openmp, toolchain.python.pyccel,
                                     toolchain.python.version, toolchain.python.platform}));
    return record->answer(module.bytes_sha256, question, [&] { return json(key()); }).get<std::string>();
}

// Pyccel writes the module's dotted name and the folder it compiles in into
// its wrapper's C text, which it encodes as UTF-8: other bytes end its run in a
// UnicodeEncodeError after the Fortran or C compile. Said before anything runs.
std::string not_utf8_problem(const HostModule& module)
{
    return module.file.string() + ": the module name '" + module.name +
           "' is not UTF-8, and Pyccel cannot build such a module (it writes the name into its UTF-8 wrapper); "
           "rename the folders and file below " +
           module.source_root.string() + " with UTF-8 names to build its host version";
}

// Cache and in-place builds both run Pyccel in a workspace below the cache root.
void refuse_a_cache_root_pyccel_cannot_name(HostPlan& plan, const std::string& cache_root)
{
    if (util::is_utf8(cache_root)) return;
    for (HostModule& module : plan.modules)
        if (module.problem.empty())
            module.problem = module.file.string() + ": host modules are compiled in the cache " + cache_root +
                             ", whose path is not UTF-8, and Pyccel cannot build there (it writes the folder into "
                             "its UTF-8 wrapper); give the cache a UTF-8 "
                             "path for host builds (--cache-dir, or the cache-dir key)";
}

struct ImportEdge {
    std::size_t module;
    int line;
};

// Finds modules from the kernels' host files outwards, following imports.
class GraphBuilder {
public:
    explicit GraphBuilder(SourceRecord* record) : record_(record) {}
    GraphBuilder(const GraphBuilder&) = delete;  // is_file_ holds `this`
    GraphBuilder& operator=(const GraphBuilder&) = delete;

    void add_modules(const std::vector<const KernelSource*>& kernels, const std::vector<PythonModuleFile>& extra)
    {
        for (const KernelSource* kernel : kernels)
            for (const auto& host : kernel->host)
                if (host.kind == "pyccel") add(host.file.lexically_normal(), kernel->source_root, kernel);
        for (const auto& module : extra) add(module.file, module.source_root, nullptr);
        for (std::size_t next = 0; next < modules_.size(); ++next) expand(next);
    }

    std::vector<HostModule> modules_;
    std::vector<std::vector<ImportEdge>> edges_;

private:
    // `file` is lexically normal (the walker's paths and resolved imports are).
    std::size_t add(const fs::path& normal, const fs::path& source_root, const KernelSource* kernel)
    {
        auto [it, inserted] = index_.emplace(normal.native(), modules_.size());
        if (!inserted) {
            if (kernel && !modules_[it->second].kernel) modules_[it->second].kernel = kernel;
            return it->second;
        }
        HostModule module;
        module.file = normal;
        module.source_root = source_root.lexically_normal();
        module.relative = normal.lexically_relative(module.source_root);
        module.name = python_module_name(normal, module.source_root);
        module.kernel = kernel;
        modules_.push_back(std::move(module));
        edges_.emplace_back();
        return modules_.size() - 1;
    }

    void expand(std::size_t index)
    {
        HostModule& module = modules_[index];
        if (!util::is_utf8(module.name)) {
            module.problem = not_utf8_problem(module);
            return;
        }
        json facts;
        try {
            // The digest of the content the facts were read from: the two always agree.
            facts = record_ ? record_->fact(module.file, module_facts_question, module_facts, &module.bytes_sha256)
                            : read_module(module);
        } catch (const SourceError& error) {
            module.problem = error.what();
            return;
        }
        module.text_sha256 = facts.at("text_sha256").get<std::string>();
        module.openmp_runtime = facts.at("openmp_runtime").get<bool>();
        const fs::path file = module.file;
        const fs::path root = module.source_root;
        for (const auto& import : facts.at("imports")) {
            const auto& resolved = resolve(import.at(0).get<std::string>(), file, root);
            // A module that imports itself is a cycle of one: Pyccel refuses it
            // ("Imported files must be pyccelised before they can be used").
            if (!resolved) continue;
            std::size_t target = add(*resolved, root, nullptr);
            auto& edges = edges_[index];
            bool seen =
                std::any_of(edges.begin(), edges.end(), [&](const ImportEdge& e) { return e.module == target; });
            if (!seen) edges.push_back({target, import.at(1).get<int>()});
        }
    }

    json read_module(HostModule& module)
    {
        module.source = util::read_file(module.file);
        module.source_read = true;
        module.bytes_sha256 = sha256_hex(module.source);
        return module_facts(module.source);
    }

    // Struphy's modules import the same few modules hundreds of times.
    const std::optional<fs::path>& resolve(const std::string& module, const fs::path& importer, const fs::path& root)
    {
        auto key = std::make_pair(importer.parent_path().string(), module);
        auto it = resolved_.find(key);
        if (it == resolved_.end())
            it = resolved_.emplace(key, resolve_python_import(module, importer, root, is_file_)).first;
        return it->second;
    }

    SourceRecord* record_;
    std::unordered_map<std::string, std::size_t> index_;
    std::map<std::pair<std::string, std::string>, std::optional<fs::path>> resolved_;
    // Absolute imports try the same candidates below the source root from
    // every importing folder.
    util::RegularFiles module_files_;
    std::function<bool(const fs::path&)> is_file_ = [this](const fs::path& candidate) {
        return module_files_.contains(candidate);
    };
};

// Imported modules first; among modules ready together, by name. Modules in
// or behind an import cycle come last, with a problem.
std::vector<std::size_t> import_order(GraphBuilder& graph)
{
    std::size_t count = graph.modules_.size();
    std::vector<std::size_t> waiting(count, 0);
    std::vector<std::vector<std::size_t>> importers(count);
    for (std::size_t m = 0; m < count; ++m) {
        waiting[m] = graph.edges_[m].size();
        for (const auto& edge : graph.edges_[m]) importers[edge.module].push_back(m);
    }
    auto by_name = [&](std::size_t a, std::size_t b) { return graph.modules_[a].name > graph.modules_[b].name; };
    std::vector<std::size_t> ready, order;
    for (std::size_t m = 0; m < count; ++m)
        if (waiting[m] == 0) ready.push_back(m);
    while (!ready.empty()) {
        std::sort(ready.begin(), ready.end(), by_name);
        std::size_t next = ready.back();
        ready.pop_back();
        order.push_back(next);
        for (std::size_t importer : importers[next])
            if (--waiting[importer] == 0) ready.push_back(importer);
    }
    if (order.size() == count) return order;

    JobDependencies dependencies(count);
    for (std::size_t m = 0; m < count; ++m)
        for (const auto& edge : graph.edges_[m]) dependencies[m].push_back(edge.module);
    for (std::size_t m = 0; m < count; ++m) {
        if (std::find(order.begin(), order.end(), m) != order.end()) continue;
        // Each module names a cycle of its own imports (trees hold cycles of the
        // same shape): one through it when there is one, else one it imports.
        std::vector<std::size_t> found = find_cycle_through(dependencies, m);
        bool in_it = !found.empty();
        if (!in_it) found = find_cycle_from(dependencies, m);
        std::string cycle;
        for (std::size_t c : found) cycle += (cycle.empty() ? "" : " -> ") + graph.modules_[c].name;
        graph.modules_[m].problem = graph.modules_[m].file.string() + (in_it ? ": in" : ": behind") +
                                    " an import cycle (" + cycle +
                                    "); Pyccel compiles a module only after the modules it imports: break the cycle";
        order.push_back(m);
    }
    return order;
}

// Renumbers modules in `order` and records both directions of each import.
HostPlan reorder(GraphBuilder& graph, const std::vector<std::size_t>& order)
{
    std::vector<std::size_t> position(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    HostPlan plan;
    plan.jobs.resize(order.size());
    for (std::size_t old : order) plan.modules.push_back(std::move(graph.modules_[old]));
    for (std::size_t old = 0; old < order.size(); ++old) {
        for (const auto& edge : graph.edges_[old]) {
            plan.modules[position[old]].imports.push_back(position[edge.module]);
            plan.modules[position[edge.module]].imported_by.push_back(position[old]);
        }
    }
    return plan;
}

void plan_job(HostPlan& plan, std::size_t index, const HostToolchain& toolchain, bool in_place, SourceRecord* record)
{
    HostModule& module = plan.modules[index];
    HostJob& job = plan.jobs[index];
    std::map<std::string, std::string> imports;
    std::vector<std::pair<std::string, std::string>> contents;
    for (std::size_t imported : module.imports) {
        const HostModule& dependency = plan.modules[imported];
        if (module.problem.empty() && !dependency.problem.empty())
            module.problem = module.file.string() + ": imports " + dependency.name + ", which cannot be built";
        imports[dependency.name] = plan.jobs[imported].key;
        contents.emplace_back(dependency.relative.stem().string(), plan.jobs[imported].content_key);
        job.closure.insert(job.closure.end(), plan.jobs[imported].closure.begin(), plan.jobs[imported].closure.end());
        job.closure.push_back(imported);
    }
    std::sort(job.closure.begin(), job.closure.end());
    job.closure.erase(std::unique(job.closure.begin(), job.closure.end()), job.closure.end());
    if (!module.problem.empty()) return;
    job.openmp = toolchain.openmp || module.openmp_runtime;
    job.inputs = host_key_inputs(module.name, module.relative.filename().string(), module.text_sha256, imports,
                                 toolchain, job.openmp);
    if (in_place) {
        job.inputs.erase("cache_root");
        job.inputs["in_place"] = module.file.parent_path().string();
    }
    job.key = cache_key(job.inputs);
    if (in_place) return;
    job.content_key = host_content_key(module.text_sha256, job.openmp, std::move(contents));
    try {
        job.cunumpy_name = cunumpy_entry_name(module.name, cunumpy_key_of(module, toolchain, job.openmp, record));
    } catch (const SourceError& error) {  // removed since its digest was taken
        module.problem = error.what();
        job.key.clear();
    }
}

}  // namespace

std::string host_label(const HostModule& module)
{
    if (!module.kernel) return module.name;
    // A from_folder kernel with both `<name>_kernels.py` and `<name>_pyccel.py`:
    // the first is the kernel's, the other keeps its module name.
    auto first = std::find_if(module.kernel->host.begin(), module.kernel->host.end(),
                              [](const HostImplementation& h) { return h.kind == "pyccel"; });
    bool first_pyccel = first != module.kernel->host.end() && first->file.lexically_normal() == module.file;
    return first_pyccel ? module.kernel->module : module.name;
}

HostPlan plan_host_builds(const std::vector<const KernelSource*>& kernels, const HostToolchain& toolchain,
                          const HostPlanOptions& options)
{
    GraphBuilder graph(options.record);
    graph.add_modules(kernels, options.extra_modules);
    HostPlan plan = reorder(graph, import_order(graph));
    refuse_a_cache_root_pyccel_cannot_name(plan, toolchain.cache_root);
    for (std::size_t i = 0; i < plan.modules.size(); ++i)
        plan_job(plan, i, toolchain, options.in_place, options.record);
    if (!options.in_place) mark_cunumpy_name_collisions(plan);
    return plan;
}

std::string planned_source(const HostModule& module)
{
    if (module.source_read) return module.source;
    std::string bytes = util::read_file(module.file);
    if (sha256_hex(bytes) != module.bytes_sha256)
        throw InputChangedError(module.file.string() +
                                " changed after this build planned its key; run the build again");
    return bytes;
}

std::string describe_host_change(const json& before, const json& after)
{
    if (before == after) return "";
    if (before.value("source", json()) != after.value("source", json()))
        return "source " + after.value("source", json::object()).value("file", std::string("?")) + " changed";
    json old_imports = before.value("imports", json::object());
    json new_imports = after.value("imports", json::object());
    for (const auto& [name, key] : new_imports.items()) {
        if (!old_imports.contains(name)) return "now imports " + name;
        if (old_imports[name] != key) return "imported module " + name + " changed";
    }
    for (const auto& [name, key] : old_imports.items())
        if (!new_imports.contains(name)) return "no longer imports " + name;
    // The user's own choices first: a new language also brings gfortran into the compiler field.
    for (const char* choice : {"language", "openmp"}) {
        json old_value = before.value(choice, json());
        json new_value = after.value(choice, json());
        auto text = [](const json& value) {
            return value.is_string() ? value.get<std::string>() : util::json_text(value);
        };
        if (old_value != new_value) return std::string(choice) + ": " + text(old_value) + " -> " + text(new_value);
    }
    return describe_input_change(before, after);
}

}  // namespace ck
