// [tool.cunumpy-kernels] in pyproject.toml, parsed with toml++ into Config.
#include "cunumpy_kernels/config.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/library_surface.hpp"

// toml++ compiled into this file (header-only mode), not linked as Debian's
// libtomlplusplus.so: the runtime library reads pyproject.toml too, and an
// application should not need one more shared library for that.
#undef TOML_HEADER_ONLY
#undef TOML_SHARED_LIB
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <regex>

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr const char* table_name = "tool.cunumpy-kernels";

struct KeyContext {
    const fs::path& file;
    const std::string& key;
    const toml::node& node;

    [[noreturn]] void fail(const std::string& what) const
    {
        throw ConfigError(file.string() + ":" + std::to_string(node.source().begin.line) + ": [" + table_name + "] " +
                          key + ": " + what);
    }

    std::string string() const
    {
        auto value = node.value<std::string>();
        if (!value || !node.is_string()) fail("expected a string");
        return *value;
    }

    bool boolean() const
    {
        if (!node.is_boolean()) fail("expected true or false");
        return *node.value<bool>();
    }

    std::vector<std::string> strings() const
    {
        const toml::array* array = node.as_array();
        if (!array) fail("expected an array of strings");
        std::vector<std::string> values;
        for (const auto& item : *array) {
            if (!item.is_string()) fail("expected an array of strings");
            values.push_back(*item.value<std::string>());
        }
        return values;
    }

    fs::path path() const { return resolve(string()); }

    // `~` and `~/...` name the home folder, as a shell would have expanded
    // them (TOML has no shell); other paths are relative to pyproject.toml.
    // `~user` is not expanded. The result is absolute and normal, for printing.
    fs::path resolve(const std::string& value) const
    {
        if (value != "~" && value.rfind("~/", 0) != 0) return util::absolute_normal(file.parent_path() / value);
        auto home = util::home_folder();
        if (!home)
            fail("'" + value +
                 "' names the home folder, but HOME is not set and the password database has none; "
                 "write the path out");
        return util::absolute_normal(*home / value.substr(std::min<std::size_t>(value.size(), 2)));
    }

    fs::path existing_dir(const std::string& relative) const
    {
        fs::path dir = resolve(relative);
        std::error_code error;
        if (!fs::is_directory(dir, error)) fail("'" + relative + "' is not a folder (" + dir.string() + ")");
        return dir;
    }

    // Runs a validator that throws UsageError(where: ...), re-raised with this key's file and line.
    template <typename Validator>
    void check(Validator validate, const std::string& value) const
    {
        try {
            validate(value, "value");
        } catch (const UsageError& error) {
            std::string message = error.what();
            fail(message.substr(message.find(": ") + 2));
        }
    }
};

// Text that stands as one template argument in `name<...>`: NVRTC's name
// expression and nvcc's instantiation are built from it.
bool valid_template_argument(const std::string& arg)
{
    if (arg.find_first_not_of(" \t") == std::string::npos) return false;
    if (arg.find_first_of(";{}\n\r\"'\\") != std::string::npos) return false;
    int angle = 0, paren = 0;
    for (char ch : arg) {
        angle += ch == '<' ? 1 : ch == '>' ? -1 : 0;
        paren += ch == '(' ? 1 : ch == ')' ? -1 : 0;
        if (angle < 0 || paren < 0) return false;
        if (ch == ',' && angle == 0 && paren == 0) return false;
    }
    return angle == 0 && paren == 0;
}

// What a struct-headers path must be besides inside the tree: a file, or
// none yet (the check reports it missing), and no link out of the tree.
void check_struct_header_file(const KeyContext& entry, const std::string& key, const fs::path& path,
                              const fs::path& tree)
{
    std::error_code error;
    if (fs::is_directory(path, error)) entry.fail(key + ": is a folder; name the header file its writer writes");
    if (!fs::is_symlink(fs::symlink_status(path, error))) return;
    fs::path target = fs::weakly_canonical(path, error);
    fs::path inside = target.lexically_relative(fs::weakly_canonical(tree, error));
    if (error || inside.empty() || *inside.begin() == "..")
        entry.fail(key + ": a symbolic link to " + target.string() +
                   ", outside the tree; commit the header itself in the tree");
}

using KeyHandler = std::function<void(Config&, const KeyContext&)>;

const std::map<std::string, KeyHandler>& key_handlers()
{
    static const std::map<std::string, KeyHandler> handlers = {
        {"host-suffix", [](Config& c, const KeyContext& k) { c.host_suffix = k.string(); }},
        {"cuda-suffix", [](Config& c, const KeyContext& k) { c.cuda_suffix = k.string(); }},
        {"arch",
         [](Config& c, const KeyContext& k) {
             c.architectures = k.strings();
             if (c.architectures.empty()) k.fail("needs at least one architecture such as \"sm_90\"");
             for (const auto& arch : c.architectures) k.check(validate_architecture, arch);
         }},
        {"ptx", [](Config& c, const KeyContext& k) { c.ptx = k.boolean(); }},
        {"compiler",
         [](Config& c, const KeyContext& k) {
             k.check([&c](const std::string& name,
                          const std::string& where) { c.compiler = parse_compiler_kind(name, where); },
                     k.string());
         }},
        {"options",
         [](Config& c, const KeyContext& k) {
             try {
                 // Before any verbatim-options, whichever key came first.
                 auto resolved = resolve_compiler_options(k.strings(), k.file.parent_path(), "options");
                 c.options.insert(c.options.begin(), resolved.begin(), resolved.end());
                 auto written = k.strings();
                 c.options_as_written.insert(c.options_as_written.begin(), written.begin(), written.end());
             } catch (const UsageError& error) {
                 std::string message = error.what();
                 k.fail(message.substr(message.find(": ") + 2));
             }
         }},
        {"verbatim-options",
         [](Config& c, const KeyContext& k) {
             for (const auto& option : k.strings()) {
                 c.options.push_back("--verbatim-option=" + option);
                 c.options_as_written.push_back(option);
             }
         }},
        {"include-dirs",
         [](Config& c, const KeyContext& k) {
             for (const auto& dir : k.strings()) c.include_dirs.push_back(k.existing_dir(dir));
         }},
        {"cache-dir", [](Config& c, const KeyContext& k) { c.cache_dir = k.path(); }},
        {"cache-name",
         [](Config& c, const KeyContext& k) {
             k.check(validate_cache_name, k.string());
             c.cache_name = k.string();
         }},
        {"jobs",
         [](Config& c, const KeyContext& k) {
             auto value = k.node.value<int64_t>();
             if (!k.node.is_integer() || !value || *value < 1 || *value > 4096)
                 k.fail("expected an integer from 1 to 4096");
             c.jobs = static_cast<int>(*value);
         }},
        {"struct-header-timeout",
         [](Config& c, const KeyContext& k) {
             auto value = k.node.value<int64_t>();
             if (!k.node.is_integer() || !value || *value < 1 || *value > 86400)
                 k.fail("expected a number of seconds from 1 to 86400");
             c.struct_header_timeout = static_cast<int>(*value);
         }},
        {"python",
         [](Config& c, const KeyContext& k) {
             // A path is read relative to pyproject.toml (or `~`), as every path key is; a bare name is looked up in
             // PATH.
             c.python = k.string().find('/') == std::string::npos && k.string() != "~" ? k.string() : k.path().string();
         }},
        {"cunumpy-include-dir",
         [](Config& c, const KeyContext& k) { c.cunumpy_include_dir = k.existing_dir(k.string()); }},
        {"check-name-length", [](Config& c, const KeyContext& k) { c.check_name_length = k.boolean(); }},
        {"cuda-root", [](Config& c, const KeyContext& k) { c.cuda_root = k.path(); }},
        {"language",
         [](Config& c, const KeyContext& k) {
             k.check(validate_language, k.string());
             c.language = k.string();
         }},
        {"openmp", [](Config& c, const KeyContext& k) { c.openmp = k.boolean(); }},
        {"in-place", [](Config& c, const KeyContext& k) { c.in_place = k.boolean(); }},
        {"umask",
         [](Config& c, const KeyContext& k) {
             static const std::regex octal("0?[0-7]{3}");
             if (!std::regex_match(k.string(), octal))
                 k.fail("expected three octal digits (a leading 0 allowed) such as \"002\" or \"022\"");
             c.umask = static_cast<unsigned>(std::stoul(k.string(), nullptr, 8));
             if (!(*c.umask & 02))
                 k.fail("\"" + k.string() +
                        "\" lets every user write the cache, which build then refuses to use; "
                        "\"002\" lets the group write");
         }},
        {"template-args",
         [](Config& c, const KeyContext& k) {
             const toml::table* table = k.node.as_table();
             if (!table) k.fail("expected a table of kernel names to arrays of strings, e.g. { scale = [\"double\"] }");
             for (const auto& [name, node] : *table) {
                 std::string kernel(name.str());
                 KeyContext entry{k.file, k.key, node};
                 std::vector<std::string> args = entry.strings();
                 if (args.empty()) entry.fail(kernel + ": expected at least one template argument such as \"double\"");
                 for (const auto& arg : args)
                     if (!valid_template_argument(arg))
                         entry.fail(kernel + ": '" + arg +
                                    "' is not a C++ template argument (a type such as \"double\" "
                                    "or a constant such as \"3\"; no ; { } or line breaks, brackets balanced)");
                 c.template_args[kernel] = std::move(args);
             }
         }},
        {"warnings-as-errors", [](Config& c, const KeyContext& k) { c.warnings_as_errors = k.boolean(); }},
        {"struct-headers",
         [](Config& c, const KeyContext& k) {
             static const std::regex writer(R"([A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)");
             const toml::table* table = k.node.as_table();
             if (!table)
                 k.fail(
                     "expected a table of header paths to the Python callables that write them, e.g. "
                     "{ \"pkg/args.cuh\" = \"pkg.cuda_arguments:write_args_header\" }");
             for (const auto& [header, node] : *table) {
                 KeyContext entry{k.file, k.key, node};
                 std::string callable = entry.string();
                 if (!std::regex_match(callable, writer))
                     entry.fail(std::string(header.str()) + ": '" + callable +
                                "' is not \"module:callable\" (a dotted module name, a colon, a function name)");
                 fs::path path = k.resolve(std::string(header.str())).lexically_normal();
                 fs::path inside = path.lexically_relative(k.file.parent_path().lexically_normal());
                 if (inside.empty() || *inside.begin() == "..")
                     entry.fail(std::string(header.str()) + ": the header is outside the tree (" +
                                k.file.parent_path().string() +
                                "), where the check and the kernels that include it cannot rely on it; commit it in "
                                "the tree and name it relative to pyproject.toml");
                 check_struct_header_file(entry, std::string(header.str()), path, k.file.parent_path());
                 c.struct_headers[path] = callable;
             }
         }},
        {"not-kernels",
         [](Config& c, const KeyContext& k) {
             for (const auto& folder : k.strings()) {
                 fs::path normal = k.resolve(folder).lexically_normal();
                 std::error_code error;
                 // A folder renamed or removed would leave a stale line nobody notices.
                 if (!fs::is_directory(normal, error))
                     k.fail("'" + folder + "' is not a folder (" + normal.string() +
                            "); remove it from the list, or correct the path (relative to this file)");
                 c.not_kernels.push_back(normal.has_filename() ? normal : normal.parent_path());  // "a/b/" is a/b
             }
         }},
        {"in-place-modules",
         [](Config& c, const KeyContext& k) {
             for (const auto& file : k.strings()) {
                 fs::path path = k.resolve(file);
                 std::error_code error;
                 if (path.extension() != ".py" || !fs::is_regular_file(path, error))
                     k.fail("'" + file + "' is not a Python file (" + path.string() + ")");
                 c.in_place_modules.push_back(path);
             }
         }},
    };
    return handlers;
}

const toml::table* find_tool_table(const toml::table& document, const fs::path& file)
{
    const toml::table* tool = document["tool"].as_table();
    if (!tool || !tool->contains("cunumpy-kernels")) return nullptr;
    const toml::node& node = *tool->get("cunumpy-kernels");
    if (!node.is_table())
        throw ConfigError(file.string() + ":" + std::to_string(node.source().begin.line) + ": [" + table_name +
                          "] must be a table of keys, e.g. [tool.cunumpy-kernels] on its own line");
    return node.as_table();
}

// Line `number` (from 1) of `file`, spaces around it trimmed; "" past the end.
std::string line_of(const fs::path& file, std::size_t number)
{
    std::ifstream in(file);
    std::string line;
    for (std::size_t i = 0; i < number && std::getline(in, line); ++i) {}
    std::size_t first = line.find_first_not_of(" \t"), last = line.find_last_not_of(" \t\r");
    return first == std::string::npos ? "" : line.substr(first, last - first + 1);
}

toml::table parse_toml(const fs::path& file)
{
    try {
        return toml::parse_file(file.string());
    } catch (const toml::parse_error& error) {
        const auto& where = error.source().begin;
        std::string description(error.description());
        // toml++ 3.3 garbles the key it names here ('"srsrc/a.cuh" '): say it in our words.
        if (description.find("cannot redefine existing") != std::string::npos)
            description = "'" + line_of(file, where.line) +
                          "' defines again a key or table defined above; TOML allows each once: keep one";
        throw ConfigError(file.string() + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                          ": invalid TOML: " + description);
    }
}

}  // namespace

void validate_architecture(const std::string& arch, const std::string& where)
{
    static const std::regex pattern("(sm|compute)_[0-9]{2,3}[af]?");
    if (!std::regex_match(arch, pattern))
        throw UsageError(where + ": '" + arch +
                         "' is not a CUDA architecture; write sm_90 for a cubin or compute_90 for PTX");
}

void validate_cache_name(const std::string& name, const std::string& where)
{
    if (name.empty() || name[0] == '.' || name.find('/') != std::string::npos)
        throw UsageError(where + ": cache name '" + name +
                         "' must be a plain name such as my-sim (it becomes ~/.cache/<name>)");
}

CudaCompilerKind parse_compiler_kind(const std::string& name, const std::string& where)
{
    if (name == "nvrtc") return CudaCompilerKind::nvrtc;
    if (name == "nvcc") return CudaCompilerKind::nvcc;
    throw UsageError(where + ": unknown compiler '" + name + "'; choose nvrtc or nvcc");
}

std::string to_string(CudaCompilerKind kind) { return kind == CudaCompilerKind::nvrtc ? "nvrtc" : "nvcc"; }

void validate_language(const std::string& language, const std::string& where)
{
    if (language != "c" && language != "fortran")
        throw UsageError(where + ": unknown language '" + language + "'; choose c or fortran");
}

namespace {

// The keys the handlers read, so that the list never lags behind a new key.
std::string known_keys()
{
    std::string list;
    for (const auto& [key, handler] : key_handlers()) list += (list.empty() ? "" : ", ") + key;
    return list + " (see cunumpy-kernels(5))";
}

Config read_config_file(const fs::path& pyproject)
{
    Config config;
    toml::table document = parse_toml(pyproject);
    const toml::table* table = find_tool_table(document, pyproject);
    if (!table) return config;
    config.source_file = pyproject;
    for (const auto& [key, node] : *table) {
        std::string name(key.str());
        auto handler = key_handlers().find(name);
        KeyContext context{pyproject, name, node};
        if (handler == key_handlers().end()) context.fail("unknown key; known keys are " + known_keys());
        handler->second(config, context);
    }
    return config;
}

Config read_nearest_config(const fs::path& start)
{
    std::error_code error;
    fs::path dir = fs::absolute(start, error);
    if (fs::is_regular_file(dir, error)) dir = dir.parent_path();
    for (; !dir.empty(); dir = dir.parent_path()) {
        fs::path candidate = dir / "pyproject.toml";
        if (fs::is_regular_file(candidate, error)) return read_config_file(candidate);
        if (dir == dir.root_path()) break;
    }
    return Config{};
}

}  // namespace

Config load_config_file(const fs::path& pyproject)
{
    return util::at_library_surface("load_config_file", [&] { return read_config_file(pyproject); });
}

Config load_config(const fs::path& start)
{
    return util::at_library_surface("load_config", [&] { return read_nearest_config(start); });
}

}  // namespace ck
