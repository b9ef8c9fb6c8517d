#include "struct_headers/header_check.hpp"

#include "cunumpy_kernels/error.hpp"
#include "struct_headers/struct_layouts.hpp"
#include "struct_headers/writer_script.hpp"
#include "util/file_util.hpp"
#include "util/job_pool.hpp"
#include "util/json_text.hpp"
#include "util/subprocess.hpp"
#include "util/temporary_dir.hpp"
#include "util/temporary_name.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>
#include <variant>

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr const char* passed_question = "struct-header-passed/2";

std::string python_string(const std::string& text)
{
    return util::json_text(nlohmann::json(text));  // a JSON string is a Python string literal
}

bool holds_module(const fs::path& folder, const std::string& top)
{
    std::error_code error;
    return fs::is_directory(folder / top, error) || fs::is_regular_file(folder / (top + ".py"), error);
}

// The folder that holds the header's top-level package (the topmost folder
// above it with an `__init__.py`); nothing when the header's folder is no
// package.
std::optional<fs::path> package_root_of(const fs::path& header)
{
    fs::path folder = header.parent_path();
    std::error_code error;
    if (!fs::exists(folder / "__init__.py", error)) return std::nullopt;
    while (folder.has_parent_path() && folder.parent_path() != folder &&
           fs::exists(folder.parent_path() / "__init__.py", error))
        folder = folder.parent_path();
    return folder.parent_path();
}

}  // namespace

fs::path writer_source_root(const fs::path& header, const std::string& writer, const fs::path& root)
{
    std::string top = writer.substr(0, writer.find_first_of(".:"));
    std::vector<fs::path> candidates;
    if (auto package = package_root_of(header)) candidates.push_back(*package);
    candidates.push_back(root);
    std::error_code error;
    std::vector<fs::path> below;
    for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error))
        if (it->is_directory(error)) below.push_back(it->path());
    std::sort(below.begin(), below.end());
    candidates.insert(candidates.end(), below.begin(), below.end());
    for (const auto& folder : candidates)
        if (holds_module(folder, top)) return folder;
    return root;  // an installed module: found on the interpreter's own path
}

std::string regenerate_command(const std::string& python, const fs::path& source_root, const fs::path& header,
                               const std::string& writer)
{
    std::string module = writer.substr(0, writer.find(':'));
    std::string name = writer.substr(writer.find(':') + 1);
    std::string first = name.substr(0, name.find('.'));
    std::string call = "from " + module + " import " + first + "; " + name + "(" +
                       python_string(header.lexically_relative(source_root).string()) + ")";
    return "cd " + util::shell_word(source_root.string()) + " && " + util::shell_word(python) + " -c " +
           util::shell_word(call);
}

namespace {
struct Pending {
    fs::path header;
    std::string writer;
    fs::path source_root;
    std::optional<std::pair<std::string, std::string>> key;  ///< the header's digest and the question, when readable
};

// The passed answer of `header` is remembered under the header's content
// digest (the record keeps facts only about the content of files it
// records), asking about its writer, the Python and the folder it runs in.
// Nothing when the header cannot be read: such a check never passes.
std::optional<std::pair<std::string, std::string>> pass_key(SourceRecord& record, const Config& config,
                                                            const Pending& item)
{
    try {
        std::string question = std::string(passed_question) + " " +
                               util::json_text(nlohmann::json{item.writer, config.python, item.source_root.string(),
                                                              item.header.string()});
        return std::make_pair(record.digest(item.header), question);
    } catch (const SourceError&) {
        return std::nullopt;
    }
}

// Whether what a passed run read still reads the same: every file it read
// keeps its digest, and every file it looked for and missed is still missing.
bool inputs_unchanged(SourceRecord& record, const nlohmann::json& passed)
{
    for (const auto& [file, digest] : passed.at("files").items()) {
        try {
            if (record.digest(file) != digest.get<std::string>()) return false;
        } catch (const SourceError&) {
            return false;
        }
    }
    std::error_code error;
    for (const auto& absent : passed.at("absent"))
        if (fs::symlink_status(absent.get<std::string>(), error).type() != fs::file_type::not_found) return false;
    return true;
}

struct NotRemembered {};

bool remembered_pass(SourceRecord& record, const Pending& item)
{
    if (!item.key) return false;
    try {
        record.answer(
            item.key->first, item.key->second, []() -> nlohmann::json { throw NotRemembered{}; },
            [&](const nlohmann::json& passed) { return inputs_unchanged(record, passed); });
        return true;
    } catch (const NotRemembered&) {
        return false;
    }
}

// Why a writer's process ended without an answer, in words.
std::string ended_without_answer(const Config& config, const util::ProcessResult& result)
{
    if (result.timed_out)
        return "did not finish within " + std::to_string(config.struct_header_timeout) +
               " s and was stopped (the struct-header-timeout key sets the limit)";
    std::string output = result.output.empty() ? "" : "; its output:\n" + result.output;
    if (result.exit_code > 128)
        return "was killed by signal " + std::to_string(result.exit_code - 128) + " before it returned" + output;
    return "ended its Python process (exit " + std::to_string(result.exit_code) +
           ", as os._exit does) before it returned" + output;
}

// Runs one writer in its own process (a writer that hangs, exits or breaks
// the interpreter leaves the others checked); the answer, or a finding.
std::variant<nlohmann::json, std::string> run_writer(const Config& config, const Pending& item, const fs::path& scratch)
{
    fs::create_directories(scratch);
    fs::path request_file = scratch / "request.json", answer = scratch / "answer.json";
    nlohmann::json request = {{"writer", item.writer},
                              {"header", item.header.string()},
                              {"scratch", (scratch / "out" / item.header.filename()).string()},
                              {"shown", item.header.lexically_relative(item.source_root).string()}};
    fs::create_directories(scratch / "out");
    std::ofstream(request_file) << util::json_text(request);
    auto result = util::run_process_within(
        {config.python, "-c", struct_header_writer_script, request_file.string(), answer.string()}, item.source_root,
        config.struct_header_timeout);
    std::error_code error;
    if (!fs::exists(answer, error)) return ended_without_answer(config, result);
    try {
        nlohmann::json parsed = util::parse_json(util::read_file(answer));
        if (!parsed.at("files").is_array() || !parsed.at("absent").is_array()) throw ToolchainError("no file lists");
        return parsed;
    } catch (const std::exception& failure) {  // nlohmann's errors too: a child that wrote something else
        return "left an answer that cannot be read (" + std::string(failure.what()) + ")";
    }
}

// Where the struct-headers entry of `item` is, for a message that blames it.
std::string entry_of(const Config& config, const Pending& item)
{
    std::string file = config.source_file.empty() ? "the configuration" : config.source_file.string();
    return "the struct-headers entry \"" + item.header.string() + "\" = \"" + item.writer + "\" in " + file;
}

// The finding of a writer that could not be called: the configuration's
// fault, or its module's, not the writer's.
std::optional<std::string> unreachable_writer(const Config& config, const Pending& item, const nlohmann::json& result)
{
    std::string module = item.writer.substr(0, item.writer.find(':'));
    if (result.contains("no_module"))
        return "module " + module + " of its writer cannot be found (no module " +
               result.at("no_module").get<std::string>() + ") by " + config.python + " run in " +
               item.source_root.string() + ": fix the module name in " + entry_of(config, item) +
               ", or install its package into that Python";
    if (result.contains("no_function"))
        return "module " + module + " has no " + result.at("no_function").get<std::string>() + ", the callable that " +
               entry_of(config, item) + " names: fix the name there";
    if (result.contains("not_callable"))
        return item.writer + " is " + result.at("not_callable").get<std::string>() +
               ", not a function: " + entry_of(config, item) +
               " must name the function that writes the header (it is called with the path to write)";
    if (result.contains("import_error"))
        return "module " + module + " of its writer " + item.writer + " cannot be imported; it raised " +
               result.at("import_error").get<std::string>() + "\n  fix the module, or its name in " +
               entry_of(config, item);
    return std::nullopt;
}

// The finding of one writer's answer; nothing when the header is what it writes.
std::optional<std::string> problem_of(const Config& config, const Pending& item, const nlohmann::json& result,
                                      const fs::path& scratch, std::string& diff)
{
    if (auto unreachable = unreachable_writer(config, item, result)) return unreachable;
    if (result.contains("wrote_committed"))
        return "its writer " + item.writer + " tried to change the committed header itself (" +
               result.at("wrote_committed").get<std::string>() + ") instead of writing the path it was given (" +
               (scratch / "out" / item.header.filename()).string() +
               "); the check refused it, so the header is as committed: make the writer write to its argument";
    if (result.contains("error"))
        return "its writer " + item.writer + " raised " + result.at("error").get<std::string>();
    if (result.value("wrote_nothing", false))
        return "its writer " + item.writer + " wrote nothing to the path it was given (" +
               (scratch / "out" / item.header.filename()).string() + ")";
    if (result.at("same").get<bool>()) return std::nullopt;
    if (result.contains("not_utf8")) {
        std::string byte = std::to_string(result.value("offset", 0));
        if (result.at("not_utf8") == "committed")
            return "the committed header is not UTF-8 text (byte " + byte +
                   " is not), so it cannot be what the writer writes and no diff is shown; regenerate it";
        return "its writer " + item.writer + " wrote text that is not UTF-8 (byte " + byte +
               " of what it wrote is not); a struct header is UTF-8 text";
    }
    diff = result.value("diff", "");
    return result.value("missing", false) ? "does not exist; " + item.writer + " writes it"
                                          : "differs from what " + item.writer + " writes";
}

// The files a passed run read, with their digests; nothing when one changed
// while the writer ran (its digest now is not the one it was read with: the
// header was written from the old content, and remembering the new one would
// skip the next check), or when it started a process, whose reads are not seen.
std::optional<nlohmann::json> passed_inputs(SourceRecord& record, const nlohmann::json& result)
{
    if (result.contains("untracked")) return std::nullopt;
    const nlohmann::json& read = result.value("read_digests", nlohmann::json::object());
    nlohmann::json files = nlohmann::json::object();
    for (const auto& file : result.at("files")) {
        std::string path = file.get<std::string>();
        try {
            std::string now = record.digest(path);
            if (read.contains(path) && read.at(path).get<std::string>() != now) return std::nullopt;
            files[path] = now;
        } catch (const SourceError&) {
            // Gone already (a module written to a temporary folder): it decides nothing next time.
        }
    }
    return nlohmann::json{{"files", files}, {"absent", result.at("absent")}};
}

// A Python that cannot be started fails every header alike: one error, naming where it was set.
void require_python(const Config& config)
{
    if (!util::find_in_path(config.python).empty()) return;
    std::string where = config.source_file.empty() ? "" : " in " + config.source_file.string();
    throw ToolchainError("struct-headers: the Python interpreter '" + config.python +
                         "' that runs the header writers cannot be run (not found, or not an executable file): set "
                         "the python key of [tool.cunumpy-kernels]" +
                         where + ", or pass --python");
}

// The committed header's first line a unified diff changes (a line it
// removes, or where it inserts); 0 without a hunk.
int first_changed_line(const std::string& diff)
{
    std::istringstream lines(diff);
    int line = 0;
    for (std::string text; std::getline(lines, text);) {
        if (text.rfind("@@ -", 0) == 0) {
            line = std::atoi(text.c_str() + 4);
            if (text.find(",0 ") != std::string::npos) ++line;  // an empty range names the line before
        } else if (line > 0 && !text.empty() && (text[0] == '-' || text[0] == '+')) {
            return std::max(line, 1);
        } else if (line > 0 && !text.empty() && text[0] == ' ') {
            ++line;
        }
    }
    return 0;
}

// The line of "<header>:<line>: ..." at the start of a reader's message; 0 without one.
int line_of_message(const fs::path& header, const std::string& message)
{
    std::string prefix = header.string() + ":";
    if (message.rfind(prefix, 0) != 0) return 0;
    return std::atoi(message.c_str() + prefix.size());
}

// Each struct that two configured headers define: the runtime could pack
// either layout, and no writer's output shows it. A header that cannot be
// read is its own finding already.
void add_duplicate_structs(const Config& config, StructHeaderCheck& check)
{
    std::vector<StructHeaderFinding>& findings = check.findings;
    try {
        ConfiguredStructs structs = read_configured_structs(config);
        if (structs.unreadable.empty() && structs.duplicates.empty()) check.layouts = structs.layouts;
        for (const auto& [header, message] : structs.unreadable)
            findings.push_back(
                {header, config.struct_headers.at(header), message, "", "", line_of_message(header, message)});
        for (const auto& duplicate : structs.duplicates)
            findings.push_back(
                {duplicate.second, config.struct_headers.at(duplicate.second), duplicate.message(), "", ""});
    } catch (const SourceError&) {
        // A header that cannot be read: its writer's run reports it.
    }
}

// Runs each pending writer; a finding for each header that is not what its writer writes.
void run_pending(const Config& config, SourceRecord& record, const std::vector<Pending>& pending,
                 std::vector<StructHeaderFinding>& findings)
{
    require_python(config);
    util::TemporaryDir scratch(fs::temp_directory_path() / ("cunumpy-kernels-headers-" + unique_temporary_name()));
    // The writers' processes side by side (each mostly imports); their answers read in order.
    std::vector<std::variant<nlohmann::json, std::string>> answers(pending.size());
    JobPool(job_count(config.jobs)).run(pending.size(), [&](std::size_t i) {
        try {
            answers[i] = run_writer(config, pending[i], scratch.path() / std::to_string(i));
        } catch (const std::exception& error) {
            answers[i] = std::string("could not be started: ") + error.what();
        }
    });
    for (std::size_t i = 0; i < pending.size(); ++i) {
        const Pending& item = pending[i];
        fs::path folder = scratch.path() / std::to_string(i);
        StructHeaderFinding finding{item.header, item.writer, "", "",
                                    regenerate_command(config.python, item.source_root, item.header, item.writer)};
        const auto& answer = answers[i];
        if (auto* ended = std::get_if<std::string>(&answer)) {
            finding.problem = "its writer " + item.writer + " " + *ended;
        } else if (auto problem = problem_of(config, item, std::get<nlohmann::json>(answer), folder, finding.diff)) {
            finding.problem = *problem;
        } else {
            auto inputs = passed_inputs(record, std::get<nlohmann::json>(answer));
            // Replaces a pass remembered from older inputs (its check found them
            // changed), or every later check would run the writer again.
            auto replaced = [](const nlohmann::json&) { return false; };
            if (item.key && inputs)
                record.answer(
                    item.key->first, item.key->second, [&] { return *inputs; }, replaced);
            continue;
        }
        finding.line = first_changed_line(finding.diff);
        findings.push_back(std::move(finding));
    }
}

}  // namespace

StructHeaderCheck check_struct_headers(const Config& config, SourceRecord& record)
{
    StructHeaderCheck check;
    check.headers = config.struct_headers.size();
    if (config.struct_headers.empty()) {
        check.layouts.emplace();
        return check;
    }
    fs::path root = config.source_file.empty() ? fs::current_path() : config.source_file.parent_path();
    std::vector<Pending> pending;
    for (const auto& [header, writer] : config.struct_headers) {
        Pending item{header, writer, writer_source_root(header, writer, root), std::nullopt};
        item.key = pass_key(record, config, item);
        if (!remembered_pass(record, item)) pending.push_back(std::move(item));
    }
    check.ran = pending.size();
    if (!pending.empty()) run_pending(config, record, pending, check.findings);
    add_duplicate_structs(config, check);
    return check;
}

std::string finding_text(const StructHeaderFinding& finding, const std::function<std::string(const fs::path&)>& display)
{
    std::string text = display(finding.header) + ": error: " + finding.problem + "\n" + finding.diff;
    if (!finding.diff.empty() && finding.diff.back() != '\n') text += "\n";
    return finding.regenerate.empty() ? text : text + "  regenerate it: " + finding.regenerate + "\n";
}

nlohmann::json to_json(const std::vector<StructHeaderFinding>& findings,
                       const std::function<std::string(const fs::path&)>& display)
{
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : findings)
        list.push_back({{"header", display(f.header)},
                        {"writer", f.writer},
                        {"problem", f.problem},
                        {"line", f.line},
                        {"diff", f.diff},
                        {"regenerate", f.regenerate}});
    return list;
}

}  // namespace ck
