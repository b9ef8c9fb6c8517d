#include "host/cunumpy_names.hpp"

#include "host/host_job.hpp"

#include <algorithm>
#include <map>

namespace ck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string last_part(const std::string& dotted) { return dotted.substr(dotted.rfind('.') + 1); }

// What differs between two modules of one text: the first import, by stem,
// whose content differs.
std::string import_difference(const HostPlan& plan, std::size_t a, std::size_t b)
{
    std::map<std::string, std::size_t> theirs;
    for (std::size_t imported : plan.modules[b].imports)
        theirs[plan.modules[imported].relative.stem().string()] = imported;
    for (std::size_t mine : plan.modules[a].imports) {
        auto other = theirs.find(plan.modules[mine].relative.stem().string());
        if (other != theirs.end() && plan.jobs[mine].content_key != plan.jobs[other->second].content_key)
            return plan.modules[mine].name + " and " + plan.modules[other->second].name + " differ";
    }
    return "the modules they import differ";
}

std::string collision_problem(const HostPlan& plan, std::size_t module, std::size_t other)
{
    const HostModule& m = plan.modules[module];
    const HostModule& o = plan.modules[other];
    const std::string& name = plan.jobs[module].cunumpy_name;
    // The first line is what status shows: the two modules and the effect.
    return m.file.string() + ": not built: it shares cunumpy's build name " + name + " with " + o.name + " (" +
           o.file.string() + "), which imports different code, so cunumpy would load one's build for the other\n" +
           "cunumpy's PyccelCache names a build after the module's own text, which is the same in both, not after "
           "the modules it imports: " +
           import_difference(plan, module, other) + ".\n" +
           "Make the two texts differ (a comment naming the package is enough) and build again.";
}

// A module whose import has a problem cannot be built either.
void propagate_problems(HostPlan& plan)
{
    for (HostModule& module : plan.modules) {
        if (!module.problem.empty()) continue;
        for (std::size_t imported : module.imports) {
            const HostModule& dependency = plan.modules[imported];
            if (dependency.problem.empty()) continue;
            module.problem = module.file.string() + ": imports " + dependency.name + ", which cannot be built";
            break;
        }
    }
}

std::string content_of(const EntryStore& store, const std::string& key, int depth)
{
    // Import chains are acyclic; the bound only stops a corrupted cache.
    if (depth > 64 || !is_entry_key(key)) return "";
    auto manifest = store.find("host", key);
    if (!manifest) return "";
    try {
        std::vector<std::pair<std::string, std::string>> imports;
        for (const auto& [name, imported] : manifest->inputs.at("imports").items()) {
            std::string content = content_of(store, imported.get<std::string>(), depth + 1);
            if (content.empty()) return "";
            imports.emplace_back(last_part(name), content);
        }
        return host_content_key(manifest->inputs.at("source").at("sha256").get<std::string>(),
                                manifest->inputs.at("openmp").get<bool>(), std::move(imports));
    } catch (const json::exception&) {
        return "";
    }
}

// Everything but the module's identity and its imports' keys: the toolchain,
// language, OpenMP and the cache root.
bool same_toolchain(json a, json b)
{
    for (json* inputs : {&a, &b})
        for (const char* identity : {"module", "source", "imports"}) inputs->erase(identity);
    return a == b;
}

std::string quoted_key(const std::string& key) { return "key " + key.substr(0, 12) + "..."; }

}  // namespace

void mark_cunumpy_name_collisions(HostPlan& plan)
{
    std::map<std::string, std::vector<std::size_t>> by_name;
    for (std::size_t i = 0; i < plan.jobs.size(); ++i)
        if (!plan.jobs[i].cunumpy_name.empty()) by_name[plan.jobs[i].cunumpy_name].push_back(i);
    for (const auto& [name, members] : by_name) {
        for (std::size_t module : members) {
            auto other = std::find_if(members.begin(), members.end(), [&](std::size_t o) {
                return plan.jobs[o].content_key != plan.jobs[module].content_key;
            });
            if (other != members.end()) plan.modules[module].problem = collision_problem(plan, module, *other);
        }
    }
    propagate_problems(plan);
}

std::string entry_content_key(const EntryStore& store, const std::string& key) { return content_of(store, key, 0); }

CunumpyNameHolder check_cunumpy_name(const HostPlan& plan, std::size_t index, const EntryStore& store,
                                     const CunumpyEntry& named)
{
    const HostModule& module = plan.modules[index];
    const HostJob& job = plan.jobs[index];
    std::string prefix = "cunumpy's name " + job.cunumpy_name + " ";
    if (named.kind == CunumpyEntry::Kind::absent)
        return {prefix + "is missing, so cunumpy would compile the module itself", ""};
    if (named.kind == CunumpyEntry::Kind::folder) {
        if (module.imports.empty() && module.imported_by.empty()) return {};  // cunumpy's key covers every input
        return {prefix + "is a folder cunumpy built itself, whose key leaves the imported modules out", ""};
    }
    if (named.target == host_build_folder(store, job.key, module).lexically_relative(store.root())) return {};
    std::string key = host_key_of_link(named.target);
    if (key.empty()) return {prefix + "is a link to " + named.target.string() + ", which is no build of ours", ""};
    // An identical copy's build, in this plan or from another build, serves as well.
    for (std::size_t i = 0; i < plan.jobs.size(); ++i)
        if (plan.jobs[i].key == key && plan.jobs[i].content_key == job.content_key) return {};
    auto manifest = store.find("host", key);
    if (!manifest) return {prefix + "points at the entry " + quoted_key(key) + ", which is missing or incomplete", ""};
    if (same_toolchain(manifest->inputs, job.inputs) && entry_content_key(store, key) == job.content_key) return {};
    if (manifest->module == module.name)
        return {prefix + "points at an older build of this module (" + quoted_key(key) + "), which cunumpy loads", ""};
    return {prefix + "points at the build of " + manifest->module +
                " (same text, different imports), which cunumpy loads for this module too",
            manifest->module};
}

}  // namespace ck
