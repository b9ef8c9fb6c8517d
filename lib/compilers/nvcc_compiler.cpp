// nvcc as a child process, for users whose kernels need its host-side
// preprocessing or who want the toolchain their CI already trusts.
#include "compilers/nvcc_compiler.hpp"

#include "compilers/compiler_scratch.hpp"
#include "compilers/entry_symbols.hpp"
#include "compilers/tool_probe.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <algorithm>
#include <cstdlib>
#include <unistd.h>
#include <utility>

namespace ck {

namespace fs = std::filesystem;

namespace {

std::string last_nonempty_line(const std::string& text)
{
    std::string last, line;
    for (char c : text + "\n") {
        if (c != '\n') { line += c; continue; }
        if (!line.empty()) last = line;
        line.clear();
    }
    return last;
}

std::string first_line(const std::string& text)
{
    return text.substr(0, text.find('\n'));
}

// The file nvcc runs for `spec` (its -ccbin rule): a folder means the gcc in
// it, a name without a slash is looked up in PATH.
fs::path host_compiler_file(const std::string& spec)
{
    std::error_code error;
    if (spec.find('/') == std::string::npos) return util::find_in_path(spec);
    fs::path path = fs::absolute(spec, error);
    return fs::is_directory(path, error) ? path / "gcc" : path;
}

std::string read_profile(const fs::path& nvcc)
{
    try {
        return util::read_file(nvcc.parent_path() / "nvcc.profile");
    } catch (const SourceError&) {
        return "";  // nvcc runs without one too; the empty text is then what the key holds
    }
}

bool is_within(const fs::path& path, const fs::path& dir)
{
    auto rel = path.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

// The key names of what nvcc read; throws nothing: a file the key lacks is
// named in `missing`.
std::vector<std::string> compare_with_key(const std::vector<std::string>& read, const fs::path& source,
                                          const std::vector<fs::path>& toolkit_dirs,
                                          const std::map<fs::path, std::string>& headers,
                                          std::vector<std::string>& missing)
{
    std::vector<std::string> names;
    std::error_code error;
    fs::path source_file = fs::weakly_canonical(source, error);
    // Canonical: the toolkit's include folder is often a link into targets/<arch>/.
    std::vector<fs::path> toolkit;
    for (const auto& dir : toolkit_dirs) toolkit.push_back(fs::weakly_canonical(dir, error));
    std::map<fs::path, std::string> key_files;
    for (const auto& [file, name] : headers) key_files[fs::weakly_canonical(file, error)] = name;
    auto in_toolkit = [&](const fs::path& path) {
        return std::any_of(toolkit.begin(), toolkit.end(), [&](const fs::path& dir) { return is_within(path, dir); });
    };
    for (const auto& file : read) {
        fs::path path = fs::weakly_canonical(fs::absolute(file, error), error);
        if (path == source_file || in_toolkit(path)) continue;
        auto it = key_files.find(path);
        if (it != key_files.end()) names.push_back(it->second);
        else missing.push_back(path.string());
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

// nvcc emits a template's instantiation only when something uses it: the
// address taken in host code does, as NVRTC's name expressions do. Appended
// after the user's text, so that its lines keep their numbers (a `#line`
// naming the entry would show up in nvcc's -MMD list as a file it read).
std::string template_instantiation(const CudaCompileRequest& request)
{
    const std::string& entry = request.entry_expression();
    if (entry == request.kernel) return "";
    return "\n// cunumpy-kernels: the entry " + entry + " (template-args or the explicit instantiation)\n"
           "static void* const cunumpy_kernels_entry_instance __attribute__((unused)) = (void*)&" + entry + ";\n";
}

}  // namespace

std::vector<std::string> parse_make_dependencies(const std::string& text)
{
    std::vector<std::string> words;
    std::string word;
    bool after_target = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\\' && i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\n')) {
            if (text[++i] == ' ') word += ' ';
            else if (!word.empty()) words.push_back(std::exchange(word, {}));
            continue;
        }
        if (c == ':' && !after_target && (i + 1 >= text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
            after_target = true;
            word.clear();
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n') {
            if (after_target && !word.empty()) words.push_back(word);
            word.clear();
            continue;
        }
        word += c;
    }
    if (after_target && !word.empty()) words.push_back(word);
    return words;
}

NvccCompiler::NvccCompiler(const fs::path& cuda_root, const ToolProbe* probe, const EnvironmentReader& read)
    : probe_(probe)
{
    std::error_code error;
    nvcc_ = cuda_root / "bin" / "nvcc";
    if (!fs::exists(nvcc_, error)) nvcc_ = util::find_in_path("nvcc");
    if (nvcc_.empty()) throw ToolchainError("nvcc not found in " + (cuda_root / "bin").string() + " or PATH; set cuda-root or use --compiler nvrtc");
    toolkit_ = fs::weakly_canonical(nvcc_, error).parent_path().parent_path();
    environment_ = nvcc_environment(read_profile(nvcc_), read);
    for (const auto& name : environment_.removed) child_environment_.emplace_back(name, std::nullopt);
}

std::vector<fs::path> NvccCompiler::toolkit_include_dirs() const
{
    return {toolkit_ / "include", toolkit_ / "include" / "cccl"};
}

std::string NvccCompiler::identity() const
{
    auto ask = [this] {
        auto result = util::run_process({nvcc_.string(), "--version"});
        if (result.exit_code != 0) throw ToolchainError(nvcc_.string() + " --version failed:\n" + result.output);
        return "nvcc " + last_nonempty_line(result.output);
    };
    return probe_ ? probe_->answer(nvcc_, "nvcc-identity", ask) : ask();
}

std::optional<std::string> NvccCompiler::remembered_identity() const
{
    if (!probe_) return std::nullopt;
    std::string identity = probe_->answer(nvcc_, "nvcc-identity", [] { return std::string(); });
    return identity.empty() ? std::nullopt : std::optional<std::string>(identity);
}

std::optional<std::string> NvccCompiler::host_compiler_identity(const std::optional<std::string>& ccbin,
                                                                bool may_start) const
{
    std::string spec = "gcc", origin = "gcc in PATH";
    if (ccbin) {
        spec = *ccbin;
        origin = "-ccbin";
    } else if (environment_.keyed.contains("NVCC_CCBIN")) {
        spec = environment_.keyed.at("NVCC_CCBIN").get<std::string>();
        origin = "NVCC_CCBIN";
    }
    fs::path file = host_compiler_file(spec);
    std::error_code error;
    if (file.empty() || !fs::is_regular_file(file, error)) {
        std::string what = fs::is_directory(spec, error) ? "folder " + spec + " holds no gcc" : spec + " not found";
        throw ToolchainError("nvcc's host compiler: " + what + " (" + origin + "); " +
                             (origin == "gcc in PATH" ? "install gcc, or point -ccbin or NVCC_CCBIN at a host compiler"
                                                      : "point " + origin + " at a gcc or at the folder holding one"));
    }
    auto ask = [&]() -> std::string {
        if (!may_start) return "";
        auto result = util::run_process({file.string(), "--version"});
        if (result.exit_code != 0) throw ToolchainError(file.string() + " --version failed:\n" + result.output);
        return "host " + first_line(result.output);
    };
    std::string identity = probe_ ? probe_->answer(file, "host-compiler-identity", ask) : ask();
    if (identity.empty()) return std::nullopt;
    return identity;
}

CudaCompileOutput NvccCompiler::compile(const CudaCompileRequest& request) const
{
    CompilerScratch scratch;
    bool cubin = artifact_extension(request.target) == "cubin";
    fs::path out = scratch.path() / (request.kernel + "." + artifact_extension(request.target));
    fs::path dependencies = scratch.path() / "dependencies.d";
    std::vector<std::string> argv = {nvcc_.string(), cubin ? "-cubin" : "-ptx", "-arch=" + request.target, "-o", out.string()};
    argv.insert(argv.end(), request.options.begin(), request.options.end());
    for (const auto& dir : request.include_dirs) argv.push_back("-I" + dir.string());
    for (const auto& dir : request.system_include_dirs) argv.insert(argv.end(), {"-isystem", dir.string()});
    for (const auto& file : request.pre_includes) argv.insert(argv.end(), {"-include", file.string()});
    // The compiler checks the scanner: it lists what it read, in the same run.
    argv.insert(argv.end(), {"-MMD", "-MF", dependencies.string()});
    // nvcc reads the file itself: hand it the exact text that was hashed.
    fs::path source = scratch.path() / request.source_file.filename();
    util::write_file_synced(source, request.source + template_instantiation(request));
    argv.push_back(source.string());

    CudaCompileOutput output;
    // nvcc's intermediate `tmpxft_*` files go to TMPDIR: inside the scratch
    // folder, an interrupt's cleanup or a later build removes them with it.
    util::EnvironmentOverrides environment = child_environment_;
    environment.emplace_back("TMPDIR", scratch.tmp().string());
    auto result = util::run_process(argv, request.source_file.parent_path(), environment);
    std::string log = result.output;
    // Point diagnostics at the user's file, not the scratch copy.
    for (std::size_t at; (at = log.find(source.string())) != std::string::npos;)
        log.replace(at, source.string().size(), request.source_file.string());
    output.log = to_file_line_diagnostics(log);
    if (result.exit_code != 0) return output;
    std::vector<std::string> missing;
    output.dependencies = compare_with_key(parse_make_dependencies(util::read_file(dependencies)), source, toolkit_include_dirs(),
                                           request.headers, missing);
    if (!missing.empty()) {
        for (const auto& file : missing)
            output.log += (output.log.empty() ? "" : "\n") + request.source_file.string() +
                          ": error: scanner bug: nvcc read " + file +
                          ", which the cache key lacks (its include scanner did not find it); nothing was published. "
                          "Please report it with the #include lines that lead there";
        return output;
    }
    output.artifact = util::read_file(out);
    auto symbols = cubin ? elf_function_symbols(output.artifact) : ptx_entries(output.artifact);
    const std::string& entry = request.entry_expression();
    output.entry_symbol = entry == request.kernel ? pick_entry_symbol(symbols, request.kernel)
                                                  : pick_template_entry_symbol(symbols, request.kernel, entry);
    if (output.entry_symbol.empty()) {
        output.log += (output.log.empty() ? "" : "\n") + request.source_file.string() + ": no unique __global__ " +
                      entry + " in nvcc's output";
        return output;
    }
    output.ok = true;
    return output;
}

}  // namespace ck
