// manifest.json of an entry: written whole, read narrowly.
#include "cache/cache.hpp"
#include "util/json_text.hpp"
#include "cunumpy_kernels/error.hpp"

namespace ck {

using nlohmann::json;

namespace {

template <typename T>
T field(const json& j, const char* name, const std::string& where)
{
    auto it = j.find(name);
    if (it == j.end()) throw CacheError(where + ": manifest has no '" + name + "'");
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        throw CacheError(where + ": manifest field '" + name + "' has the wrong type");
    }
}

// Every field but the inputs, which the two from_json copy or move;
// `has_inputs` says whether the manifest had them.
Manifest fields_but_inputs(const json& j, const std::string& where, bool has_inputs)
{
    if (!j.is_object()) throw CacheError(where + ": manifest is not a JSON object");
    if (field<int>(j, "format", where) != 1)
        throw CacheError(where + ": manifest format is not 1; it was written by another version of cunumpy-kernels");
    Manifest m;
    m.key = field<std::string>(j, "key", where);
    m.kind = field<std::string>(j, "kind", where);
    m.module = field<std::string>(j, "module", where);
    m.kernel = field<std::string>(j, "kernel", where);
    m.entry_symbol = field<std::string>(j, "entry_symbol", where);
    m.target = field<std::string>(j, "target", where);
    if (!has_inputs) throw CacheError(where + ": manifest has no 'inputs'");
    m.built_at = field<std::string>(j, "built_at", where);
    m.seconds = field<double>(j, "seconds", where);
    m.log = field<std::string>(j, "log", where);
    if (j.contains("compiler_dependencies"))
        m.compiler_dependencies = field<std::vector<std::string>>(j, "compiler_dependencies", where);
    if (j.contains("published_by")) m.published_by = field<std::string>(j, "published_by", where);
    auto artifacts = j.find("artifacts");  // iterated where it lies, not copied
    if (artifacts == j.end()) throw CacheError(where + ": manifest has no 'artifacts'");
    for (const auto& a : *artifacts) {
        Artifact artifact;
        artifact.file = field<std::string>(a, "file", where);
        artifact.target = field<std::string>(a, "target", where);
        artifact.sha256 = field<std::string>(a, "sha256", where);
        artifact.size = field<std::uint64_t>(a, "size", where);
        if (!is_entry_file_name(artifact.file))
            throw CacheError(where + ": artifact name '" + artifact.file + "' is not a relative path of plain names");
        m.artifacts.push_back(std::move(artifact));
    }
    return m;
}

}  // namespace

bool is_entry_file_name(const std::string& file)
{
    std::size_t start = 0;
    for (;;) {
        std::size_t end = file.find('/', start);
        std::string part = file.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (part.empty() || part[0] == '.') return false;
        if (end == std::string::npos) return true;
        start = end + 1;
    }
}

json Manifest::to_json() const
{
    json artifact_list = json::array();
    for (const auto& a : artifacts)
        artifact_list.push_back({{"file", a.file}, {"target", a.target}, {"sha256", a.sha256}, {"size", a.size}});
    json j = {
        {"format", 1},          {"key", key},         {"kind", kind},
        {"module", module},     {"kernel", kernel},   {"entry_symbol", entry_symbol},
        {"target", target},     {"inputs", inputs},   {"artifacts", artifact_list},
        {"built_at", built_at}, {"seconds", seconds}, {"log", log},
    };
    if (!compiler_dependencies.empty()) j["compiler_dependencies"] = compiler_dependencies;
    if (!published_by.empty()) j["published_by"] = published_by;
    return j;
}

Manifest Manifest::from_json(const json& j, const std::string& where)
{
    Manifest m = fields_but_inputs(j, where, j.is_object() && j.contains("inputs"));
    m.inputs = field<json>(j, "inputs", where);
    return m;
}

Manifest Manifest::from_json(json&& j, const std::string& where)
{
    Manifest m = fields_but_inputs(j, where, j.is_object() && j.contains("inputs"));
    m.inputs = std::move(j.at("inputs"));  // present: fields_but_inputs checked
    return m;
}

Manifest Manifest::without_inputs(std::string_view text, const std::string& where)
{
    // The inputs, about half a manifest, are read past and never built: the
    // parser still checks their syntax.
    bool has_inputs = false;
    auto skip_inputs = [&has_inputs](int depth, json::parse_event_t event, json& parsed) {
        if (depth != 1 || event != json::parse_event_t::key || parsed != "inputs") return true;
        has_inputs = true;
        return false;
    };
    json j;
    try {
        j = util::parse_json(text, skip_inputs);
    } catch (const json::exception& error) {
        throw CacheError(where + ": " + error.what());
    }
    return fields_but_inputs(j, where, has_inputs);
}

}  // namespace ck
