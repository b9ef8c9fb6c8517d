#include "struct_headers/header_check.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"
#include "util/temporary_dir.hpp"
#include "util/temporary_name.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <optional>
#include <utility>

namespace ck {

namespace fs = std::filesystem;

namespace {

// Runs each writer of the request into its scratch file and compares it with
// the committed header (difflib: the diff Python users read). Reports the
// Python sources of the modules loaded outside the standard library, which
// decide whether a passed check still holds (extension modules change with
// their package's sources, and are large to hash).
constexpr const char* writer_script = R"PY(
import difflib, importlib, json, os, sys, sysconfig, traceback
request = json.load(open(sys.argv[1]))
sys.path[:0] = request["paths"]
stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
results = []
for item in request["headers"]:
    result = {"header": item["header"]}
    try:
        module, _, name = item["writer"].partition(":")
        target = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
        target(item["scratch"])
        with open(item["scratch"], encoding="utf-8", newline="") as f:
            written = f.read()
        try:
            with open(item["header"], encoding="utf-8", newline="") as f:
                committed = f.read()
        except FileNotFoundError:
            committed = None
        result["same"] = committed == written
        if not result["same"]:
            result["missing"] = committed is None
            result["diff"] = "".join(difflib.unified_diff(
                (committed or "").splitlines(True), written.splitlines(True),
                item["shown"] + " (committed)", item["shown"] + " (as " + item["writer"] + " writes it)"))
    except BaseException as error:
        lines = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
        result["error"] = lines[-1] if lines else type(error).__name__
    results.append(result)
files = set()
for name, loaded in list(sys.modules.items()):
    path = getattr(loaded, "__file__", None) if name != "__main__" else None  # this script, in a scratch folder
    if path and path.endswith(".py") and os.path.isfile(path) and not os.path.realpath(path).startswith(stdlib):
        files.add(os.path.abspath(path))
with open(sys.argv[2], "w") as f:
    json.dump({"results": results, "files": sorted(files)}, f)
)PY";

constexpr const char* passed_question = "struct-header-passed/1";

std::string python_string(const std::string& text)
{
    return util::json_text(nlohmann::json(text));  // a JSON string is a Python string literal for these paths
}

// The folder that holds the header's top-level package (the topmost
// folder above it with an `__init__.py`): where `import <package>` finds
// it, in a flat layout and in a src/ layout alike. `root` when the header's
// folder is no package.
fs::path source_root_of(const fs::path& header, const fs::path& root)
{
    fs::path folder = header.parent_path();
    std::error_code error;
    if (!fs::exists(folder / "__init__.py", error)) return root;
    while (folder.has_parent_path() && folder.parent_path() != folder &&
           fs::exists(folder.parent_path() / "__init__.py", error))
        folder = folder.parent_path();
    return folder.parent_path();
}

// `cd <source root> && python -c 'from m import f; f("pkg/args.cuh")'`.
std::string regenerate_command(const Config& config, const fs::path& root, const fs::path& header,
                               const std::string& writer)
{
    std::string module = writer.substr(0, writer.find(':'));
    std::string name = writer.substr(writer.find(':') + 1);
    std::string first = name.substr(0, name.find('.'));
    fs::path source_root = source_root_of(header, root);
    std::string call = "from " + module + " import " + first + "; " + name + "(" +
                       python_string(header.lexically_relative(source_root).string()) + ")";
    return "cd " + source_root.string() + " && " + config.python + " -c '" + call + "'";
}

struct Pending {
    fs::path header;
    std::string writer;
    std::optional<std::pair<std::string, std::string>> key;  ///< the header's digest and the question, when readable
};

// The passed answer of `header` is remembered under the header's content
// digest (the record keeps facts only about the content of files it
// records), asking about its writer, the Python and the root it runs from.
// Nothing when the header cannot be read: such a check never passes.
std::optional<std::pair<std::string, std::string>> pass_key(SourceRecord& record, const Config& config,
                                                            const fs::path& root, const fs::path& header,
                                                            const std::string& writer)
{
    try {
        std::string question = std::string(passed_question) + " " +
                               util::json_text(nlohmann::json{writer, config.python, root.string(), header.string()});
        return std::make_pair(record.digest(header), question);
    } catch (const SourceError&) {
        return std::nullopt;
    }
}

// Whether the files a passed run loaded still have the digests they had.
bool files_unchanged(SourceRecord& record, const nlohmann::json& passed)
{
    for (const auto& [file, digest] : passed.at("files").items()) {
        try {
            if (record.digest(file) != digest.get<std::string>()) return false;
        } catch (const SourceError&) {
            return false;
        }
    }
    return true;
}

struct NotRemembered {};

nlohmann::json run_writers(const Config& config, const fs::path& root, const std::vector<Pending>& pending,
                           const fs::path& scratch)
{
    nlohmann::json request = {{"paths", nlohmann::json::array()}, {"headers", nlohmann::json::array()}};
    for (const auto& item : pending) {
        std::string source_root = source_root_of(item.header, root).string();
        if (std::find(request["paths"].begin(), request["paths"].end(), source_root) == request["paths"].end())
            request["paths"].push_back(source_root);
    }
    for (std::size_t i = 0; i < pending.size(); ++i)
        request["headers"].push_back({{"header", pending[i].header.string()},
                                      {"writer", pending[i].writer},
                                      {"shown", pending[i].header.lexically_relative(source_root_of(pending[i].header, root)).string()},
                                      {"scratch", (scratch / (std::to_string(i) + pending[i].header.extension().string())).string()}});
    fs::path request_file = scratch / "request.json", script = scratch / "write_headers.py", answer = scratch / "answer.json";
    std::ofstream(request_file) << util::json_text(request);
    std::ofstream(script) << writer_script;
    auto result = util::run_process({config.python, script.string(), request_file.string(), answer.string()}, root);
    std::error_code error;
    if (result.exit_code != 0 || !fs::exists(answer, error))
        throw ToolchainError("struct-headers: " + config.python + " could not run the header writers (exit " +
                             std::to_string(result.exit_code) + "): " + result.output);
    try {
        nlohmann::json parsed = util::parse_json(util::read_file(answer));
        if (parsed.at("results").size() != pending.size() || !parsed.at("files").is_array())
            throw ToolchainError("answers " + std::to_string(parsed.at("results").size()) + " headers of " +
                                 std::to_string(pending.size()));
        return parsed;
    } catch (const std::exception& error) {  // nlohmann's errors too: a child that wrote something else
        throw ToolchainError("struct-headers: the header writers' answer from " + config.python +
                             " cannot be read: " + error.what());
    }
}

}  // namespace

StructHeaderCheck check_struct_headers(const Config& config, SourceRecord& record)
{
    StructHeaderCheck check;
    check.headers = config.struct_headers.size();
    if (config.struct_headers.empty()) return check;
    fs::path root = config.source_file.empty() ? fs::current_path() : config.source_file.parent_path();
    auto still_holds = [&](const nlohmann::json& passed) { return files_unchanged(record, passed); };
    std::vector<Pending> pending;
    for (const auto& [header, writer] : config.struct_headers) {
        Pending item{header, writer, pass_key(record, config, root, header, writer)};
        try {
            if (!item.key) throw NotRemembered{};
            record.answer(item.key->first, item.key->second, []() -> nlohmann::json { throw NotRemembered{}; },
                          still_holds);
        } catch (const NotRemembered&) {
            pending.push_back(std::move(item));
        }
    }
    check.ran = pending.size();
    if (pending.empty()) return check;
    util::TemporaryDir scratch(fs::temp_directory_path() / ("cunumpy-kernels-headers-" + unique_temporary_name()));
    nlohmann::json answer = run_writers(config, root, pending, scratch.path());
    nlohmann::json files = nlohmann::json::object();
    for (const auto& file : answer.at("files")) {
        try {
            files[file.get<std::string>()] = record.digest(file.get<std::string>());
        } catch (const SourceError&) {
            // Gone already (a module written to a temporary folder): it decides nothing next time.
        }
    }
    for (std::size_t i = 0; i < pending.size(); ++i) {
        const nlohmann::json& result = answer.at("results").at(i);
        StructHeaderFinding finding{pending[i].header, pending[i].writer, "", "",
                                    regenerate_command(config, root, pending[i].header, pending[i].writer)};
        if (result.contains("error")) {
            finding.problem = "its writer " + pending[i].writer + " raised " + result.at("error").get<std::string>();
        } else if (!result.at("same").get<bool>()) {
            finding.problem = result.value("missing", false)
                                  ? "does not exist; " + pending[i].writer + " writes it"
                                  : "differs from what " + pending[i].writer + " writes";
            finding.diff = result.value("diff", "");
        } else {
            if (pending[i].key)
                record.answer(pending[i].key->first, pending[i].key->second,
                              [&] { return nlohmann::json{{"files", files}}; }, still_holds);
            continue;
        }
        check.findings.push_back(std::move(finding));
    }
    return check;
}

std::string finding_text(const StructHeaderFinding& finding, const std::function<std::string(const fs::path&)>& display)
{
    std::string text = display(finding.header) + ": error: " + finding.problem + "\n" + finding.diff;
    if (!finding.diff.empty() && finding.diff.back() != '\n') text += "\n";
    return text + "  regenerate it: " + finding.regenerate + "\n";
}

nlohmann::json to_json(const std::vector<StructHeaderFinding>& findings,
                       const std::function<std::string(const fs::path&)>& display)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : findings)
        list.push_back({{"header", display(f.header)}, {"writer", f.writer}, {"problem", f.problem}, {"diff", f.diff},
                        {"regenerate", f.regenerate}});
    return list;
}

}  // namespace ck
