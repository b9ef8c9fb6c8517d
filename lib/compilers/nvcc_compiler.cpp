// nvcc as a child process, for users whose kernels need its host-side
// preprocessing or who want the toolchain their CI already trusts.
#include "compilers/nvcc_compiler.hpp"

#include "compilers/compiler_scratch.hpp"
#include "compilers/entry_symbols.hpp"
#include "compilers/program_file.hpp"
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
        if (c != '\n') {
            line += c;
            continue;
        }
        if (!line.empty()) last = line;
        line.clear();
    }
    return last;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

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

// nvcc reads its own toolkit's headers wherever that toolkit is, which the
// folder above the nvcc in PATH need not say: a site's wrapper script there
// (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) runs another toolkit's nvcc. A
// folder `include` holding cuda_runtime_api.h is a toolkit's, and what lies
// under it (crt/, cccl/) is covered by the compiler's identity, as the named
// toolkit's headers are. `known` remembers each folder's answer.
bool in_a_toolkit_include(const fs::path& path, std::map<fs::path, bool>& known)
{
    std::error_code error;
    for (fs::path dir = path.parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
        if (dir.filename() != "include") continue;
        auto [it, added] = known.emplace(dir, false);
        if (added) it->second = fs::is_regular_file(dir / "cuda_runtime_api.h", error);
        if (it->second) return true;
    }
    return false;
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
    std::map<fs::path, bool> toolkit_folders;
    auto in_toolkit = [&](const fs::path& path) {
        return std::any_of(toolkit.begin(), toolkit.end(), [&](const fs::path& dir) { return is_within(path, dir); }) ||
               in_a_toolkit_include(path, toolkit_folders);
    };
    for (const auto& file : read) {
        fs::path path = fs::weakly_canonical(fs::absolute(file, error), error);
        if (path == source_file || in_toolkit(path)) continue;
        auto it = key_files.find(path);
        if (it != key_files.end())
            names.push_back(it->second);
        else
            missing.push_back(path.string());
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
    return "\n// cunumpy-kernels: the entry " + entry +
           " (template-args or the explicit instantiation)\n"
           "static void* const cunumpy_kernels_entry_instance __attribute__((unused)) = (void*)&" +
           entry + ";\n";
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
            if (text[++i] == ' ')
                word += ' ';
            else if (!word.empty())
                words.push_back(std::exchange(word, {}));
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
    if (nvcc_.empty())
        throw ToolchainError("nvcc not found in " + (cuda_root / "bin").string() +
                             " or PATH; set cuda-root or use --compiler nvrtc");
    toolkit_ = fs::weakly_canonical(nvcc_, error).parent_path().parent_path();
    environment_ = nvcc_environment(read_profile(nvcc_), read);
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
    std::string version = probe_ ? probe_->answer(nvcc_, "nvcc-identity", ask) : ask();
    auto digest = program_digest(nvcc_, probe_, true);
    if (!digest)
        throw ToolchainError(nvcc_.string() +
                             " cannot be read, so the cache key cannot hold what it is; make it readable");
    return version + " (" + *digest + ")";
}

std::optional<std::string> NvccCompiler::remembered_identity() const
{
    if (!probe_) return std::nullopt;
    std::string version = probe_->answer(nvcc_, "nvcc-identity", [] { return std::string(); });
    auto digest = program_digest(nvcc_, probe_, false);
    if (version.empty() || !digest) return std::nullopt;
    return version + " (" + *digest + ")";
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
    // The file nvcc runs, not only its version line: a -ccbin wrapper script
    // that adds flags prints the same line.
    auto digest = program_digest(file, probe_, may_start);
    if (!digest && may_start)
        throw ToolchainError("nvcc's host compiler " + file.string() + " (" + origin +
                             ") cannot be read, so the cache key "
                             "cannot hold what it is; make it readable");
    if (!digest) return std::nullopt;
    return identity + " (" + *digest + ")";
}

namespace {

std::string trimmed(const std::string& text)
{
    auto first = text.find_first_not_of(' ');
    auto last = text.find_last_not_of(' ');
    return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

}  // namespace

std::vector<NvccPhase> parse_nvcc_phase_times(const std::string& csv)
{
    std::vector<NvccPhase> phases;
    std::size_t line_start = csv.find('\n');
    while (line_start != std::string::npos && line_start + 1 < csv.size()) {
        std::size_t line_end = csv.find('\n', line_start + 1);
        std::string line =
            csv.substr(line_start + 1, line_end == std::string::npos ? std::string::npos : line_end - line_start - 1);
        line_start = line_end;
        std::vector<std::string> columns;
        for (std::size_t from = 0, comma; from <= line.size(); from = comma + 1) {
            comma = line.find(',', from);
            if (comma == std::string::npos) comma = line.size();
            columns.push_back(trimmed(line.substr(from, comma - from)));
        }
        if (columns.size() < 8 || columns[7] != "ms") continue;
        phases.push_back({columns[1], columns[3], columns[4], std::atof(columns[6].c_str()) / 1000});
    }
    return phases;
}

namespace {

// "front_end" for cicc and cudafe++, "preprocess" for gcc's, "ptxas".
std::string phase_kind(const std::string& name)
{
    if (name == "cicc" || name.rfind("cudafe", 0) == 0) return "front_end";
    if (name.rfind("gcc", 0) == 0 || name.rfind("cl.exe", 0) == 0) return "preprocess";
    if (name == "ptxas") return "ptxas";
    return "";
}

}  // namespace

CudaCompileOutput NvccCompiler::compile(const CudaCompileRequest& request) const
{
    return compile_targets(request, {request.target}).front();
}

std::vector<std::vector<std::string>> NvccCompiler::target_groups(const CudaCompileRequest&,
                                                                  const std::vector<std::string>& targets) const
{
    return {targets};
}

std::vector<CudaCompileOutput> NvccCompiler::compile_targets(const CudaCompileRequest& request,
                                                             const std::vector<std::string>& targets) const
{
    CompilerScratch scratch;
    fs::path dependencies = scratch.path() / "dependencies.d";
    fs::path times = scratch.path() / "phases.csv";
    fs::path keep = scratch.path() / "keep";
    fs::create_directory(keep);
    // One target: its artifact straight out. Several: a fat binary whose
    // parts nvcc keeps, one front end per virtual architecture.
    bool single = targets.size() == 1;
    fs::path out = scratch.path() / (request.kernel + (single ? "." + artifact_extension(targets[0]) : ".fatbin"));
    std::vector<std::string> argv = {nvcc_.string()};
    if (single) {
        argv.insert(argv.end(), {artifact_extension(targets[0]) == "cubin" ? "-cubin" : "-ptx", "-arch=" + targets[0]});
    } else {
        argv.insert(argv.end(), {"-fatbin", "-keep", "-keep-dir", keep.string()});
        for (const auto& target : targets)
            argv.insert(argv.end(), {"-gencode", "arch=" + virtual_architecture(target) + ",code=" + target});
    }
    argv.insert(argv.end(), {"-o", out.string(), "--time", times.string()});
    argv.insert(argv.end(), request.options.begin(), request.options.end());
    for (const auto& dir : request.include_dirs) argv.push_back("-I" + dir.string());
    for (const auto& dir : request.system_include_dirs) argv.insert(argv.end(), {"-isystem", dir.string()});
    for (const auto& file : request.pre_includes) argv.insert(argv.end(), {"-include", file.string()});
    // The compiler checks the scanner: it lists what it read, in the same run.
    argv.insert(argv.end(), {"-MMD", "-MF", dependencies.string()});
    // nvcc reads the file itself: hand it the exact text that was hashed.
    fs::path source = scratch.path() / request.source_file.filename();
    util::write_file(source, request.source + template_instantiation(request));
    argv.push_back(source.string());

    CudaCompileOutput shared;
    // nvcc's intermediate `tmpxft_*` files go to TMPDIR: inside the scratch
    // folder, an interrupt's cleanup or a later build removes them with it.
    util::EnvironmentOverrides environment = {{"TMPDIR", scratch.tmp().string()}};
    auto result = util::run_process(argv, request.source_file.parent_path(), environment, environment_.inherited);
    std::string log = result.output;
    // Point diagnostics at the user's file, not the scratch copy.
    for (std::size_t at; (at = log.find(source.string())) != std::string::npos;)
        log.replace(at, source.string().size(), request.source_file.string());
    shared.log = to_file_line_diagnostics(log);
    // One run cannot say which target failed (an `#error` under one
    // __CUDA_ARCH__, a ptxas limit): compile each alone to name it.
    if (result.exit_code != 0 && targets.size() > 1 && !util::stop_requested()) {
        std::vector<CudaCompileOutput> outputs;
        for (const auto& target : targets) outputs.push_back(compile_targets(request, {target}).front());
        return outputs;
    }
    if (result.exit_code != 0) return std::vector<CudaCompileOutput>(targets.size(), shared);
    std::vector<std::string> missing;
    shared.dependencies = compare_with_key(parse_make_dependencies(util::read_file(dependencies)), source,
                                           toolkit_include_dirs(), request.headers, missing);
    if (!missing.empty()) {
        for (const auto& file : missing)
            shared.log += (shared.log.empty() ? "" : "\n") + request.source_file.string() +
                          ": error: scanner bug: nvcc read " + file +
                          ", which the cache key lacks (its include scanner did not find it); nothing was published. "
                          "If a --verbatim-option makes nvcc read it, name its folder with -I or -isystem instead; "
                          "otherwise report it with the #include lines that lead there";
        return std::vector<CudaCompileOutput>(targets.size(), shared);
    }
    std::vector<NvccPhase> phases;
    std::error_code error;
    if (fs::exists(times, error)) phases = parse_nvcc_phase_times(util::read_file(times));
    std::vector<CudaCompileOutput> outputs;
    for (const auto& target : targets)
        outputs.push_back(target_output(request, target, single ? out : fs::path(), phases, shared));
    return outputs;
}

// The artifact of one target, found through `--time`'s list of what each
// phase wrote (nvcc names kept files `k.compute_80.cubin` for sm_80 but
// `k.compute_90.sm_90.cubin` beside PTX): ptxas's output for `sm_XX`, cicc's
// for `compute_XX`. `file` is the artifact when nvcc wrote it as `-o`.
CudaCompileOutput NvccCompiler::target_output(const CudaCompileRequest& request, const std::string& target,
                                              fs::path file, const std::vector<NvccPhase>& phases,
                                              const CudaCompileOutput& shared) const
{
    CudaCompileOutput output = shared;
    bool cubin = artifact_extension(target) == "cubin";
    std::string architecture = virtual_architecture(target);
    for (const auto& phase : phases) {
        std::string kind = phase_kind(phase.name);
        bool ours = phase.architecture == target || phase.architecture == architecture || phase.architecture.empty();
        if (kind.empty() || !ours || (kind == "ptxas" && phase.architecture != target)) continue;
        output.phases[kind] += phase.seconds;
        bool writes_artifact = cubin ? kind == "ptxas" : phase.name == "cicc";
        if (file.empty() && writes_artifact && phase.architecture == target) file = phase.output;
    }
    if (file.empty()) {
        output.log += (output.log.empty() ? "" : "\n") + request.source_file.string() +
                      ": error: nvcc's --time list names no " + (cubin ? "ptxas output for " : "cicc output for ") +
                      target + "; nothing was published";
        return output;
    }
    if (file.is_relative()) file = request.source_file.parent_path() / file;
    output.artifact = util::read_file(file);
    auto symbols = cubin ? elf_function_symbols(output.artifact) : ptx_entries(output.artifact);
    const std::string& entry = request.entry_expression();
    output.entry_symbol = entry == request.kernel ? pick_entry_symbol(symbols, request.kernel)
                                                  : pick_template_entry_symbol(symbols, request.kernel, entry);
    if (output.entry_symbol.empty()) {
        output.log += (output.log.empty() ? "" : "\n") + request.source_file.string() + ": no unique __global__ " +
                      entry + " in nvcc's output for " + target;
        return output;
    }
    output.ok = true;
    return output;
}

}  // namespace ck
