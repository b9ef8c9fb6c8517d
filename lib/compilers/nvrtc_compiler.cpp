// NVRTC, loaded with dlopen so that the library and CLI start on machines
// without the toolkit. compile() runs in-process, so the runtime starts no
// process; the build's compile_targets() may have the toolkit's ptxas, of
// NVRTC's very release, assemble the cubins from NVRTC's PTX.
#include "compilers/cuda_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
#include "compilers/tool_probe.hpp"

#include "compilers/compiler_scratch.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/dynamic_library.hpp"
#include "util/elapsed.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>

namespace ck {

namespace fs = std::filesystem;

namespace {

// The sonames this build knows, newest first.
const std::vector<std::string> nvrtc_sonames = {"libnvrtc.so.13", "libnvrtc.so.12"};

fs::path find_ptxas(const fs::path& cuda_root)
{
    fs::path ptxas = cuda_root / "bin" / "ptxas";
    std::error_code error;
    return fs::is_regular_file(ptxas, error) && ::access(ptxas.c_str(), X_OK) == 0 ? ptxas : fs::path();
}

fs::path find_nvrtc_file(const fs::path& cuda_root)
{
    for (const char* lib : {"lib64", "lib"})
        for (const auto& soname : nvrtc_sonames) {
            std::error_code error;
            fs::path candidate = cuda_root / lib / soname;
            if (fs::exists(candidate, error)) return candidate;
        }
    return {};
}

struct NvrtcApi {
    decltype(&nvrtcVersion) version = nullptr;
    decltype(&nvrtcCreateProgram) create = nullptr;
    decltype(&nvrtcDestroyProgram) destroy = nullptr;
    decltype(&nvrtcAddNameExpression) add_name = nullptr;
    decltype(&nvrtcCompileProgram) compile = nullptr;
    decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
    decltype(&nvrtcGetProgramLog) log = nullptr;
    decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
    decltype(&nvrtcGetCUBIN) cubin = nullptr;
    decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
    decltype(&nvrtcGetPTX) ptx = nullptr;
    decltype(&nvrtcGetLoweredName) lowered_name = nullptr;
    decltype(&nvrtcGetErrorString) error_string = nullptr;
};

template <typename F>
void resolve(const util::DynamicLibrary& library, F& function, const char* name)
{
    function = reinterpret_cast<F>(library.symbol(name));
    if (!function) throw ToolchainError(library.path() + " has no " + name + "; is it NVRTC?");
}

// Destroys the program on every path out of a compile.
class Program {
public:
    Program(const NvrtcApi& api, nvrtcProgram program) : api_(api), program_(program) {}
    ~Program() { api_.destroy(&program_); }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    nvrtcProgram get() const { return program_; }

private:
    const NvrtcApi& api_;
    nvrtcProgram program_;
};

}  // namespace

struct NvrtcCompiler::Loaded {
    util::DynamicLibrary library;
    NvrtcApi api;
};

NvrtcCompiler::NvrtcCompiler(fs::path cuda_root, const ToolProbe* probe, const EnvironmentReader& read)
    : cuda_root_(std::move(cuda_root)),
      probe_(probe),
      file_(find_nvrtc_file(cuda_root_)),
      ptxas_(find_ptxas(cuda_root_)),
      environment_(nvrtc_environment(read))
{
}

std::vector<fs::path> NvrtcCompiler::toolkit_include_dirs() const
{
    return {cuda_root_ / "include", cuda_root_ / "include" / "cccl"};
}

NvrtcCompiler::~NvrtcCompiler() = default;

const NvrtcCompiler::Loaded& NvrtcCompiler::loaded() const
{
    std::call_once(load_once_, [this] {
        std::vector<std::string> names;
        if (!file_.empty()) names.push_back(file_.string());
        names.insert(names.end(), nvrtc_sonames.begin(), nvrtc_sonames.end());
        std::string error;
        auto loaded = std::make_unique<Loaded>();
        loaded->library = util::DynamicLibrary::open_first(names, &error, /*keep_loaded=*/true);
        if (!loaded->library.loaded())
            throw ToolchainError("NVRTC not found (" + error +
                                 "); install the CUDA toolkit, set cuda-root, or use --compiler nvcc");
        auto& api = loaded->api;
        const auto& lib = loaded->library;
        resolve(lib, api.version, "nvrtcVersion");
        resolve(lib, api.create, "nvrtcCreateProgram");
        resolve(lib, api.destroy, "nvrtcDestroyProgram");
        resolve(lib, api.add_name, "nvrtcAddNameExpression");
        resolve(lib, api.compile, "nvrtcCompileProgram");
        resolve(lib, api.log_size, "nvrtcGetProgramLogSize");
        resolve(lib, api.log, "nvrtcGetProgramLog");
        resolve(lib, api.cubin_size, "nvrtcGetCUBINSize");
        resolve(lib, api.cubin, "nvrtcGetCUBIN");
        resolve(lib, api.ptx_size, "nvrtcGetPTXSize");
        resolve(lib, api.ptx, "nvrtcGetPTX");
        resolve(lib, api.lowered_name, "nvrtcGetLoweredName");
        resolve(lib, api.error_string, "nvrtcGetErrorString");
        loaded_ = std::move(loaded);
    });
    return *loaded_;
}

std::string NvrtcCompiler::version_now() const
{
    const auto& api = loaded().api;
    int major = 0, minor = 0;
    api.version(&major, &minor);
    std::string file = loaded().library.path();
    std::error_code error;
    auto size = fs::file_size(file, error);
    return "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " (" + fs::path(file).filename().string() +
           ", " + std::to_string(error ? 0 : size) + " bytes)";
}

std::string NvrtcCompiler::identity() const
{
    std::call_once(identity_once_, [this] {
        identity_ = (probe_ && !file_.empty())
                        ? probe_->answer(file_, "nvrtc-identity", [this] { return version_now(); })
                        : version_now();
    });
    return identity_;
}

std::optional<std::string> NvrtcCompiler::remembered_identity() const
{
    if (!probe_ || file_.empty()) return std::nullopt;
    std::string identity = probe_->answer(file_, "nvrtc-identity", [] { return std::string(); });
    return identity.empty() ? std::nullopt : std::optional<std::string>(identity);
}

namespace {

// "cuda_13.0.r13.0/compiler.36424714_0" of ptxas's `--version` line
// "Build cuda_13.0.r13.0/compiler.36424714_0"; "" when there is none.
std::string build_of_version_output(const std::string& output)
{
    std::size_t at = output.find("\nBuild ");
    if (at == std::string::npos) return "";
    std::string build = output.substr(at + 7, output.find('\n', at + 1) - at - 7);
    return build.find("compiler.") == std::string::npos ? "" : build;
}

}  // namespace

// The toolkit build ptxas comes from, asked once per ptxas file (the probe
// record); "" when it cannot say.
std::string NvrtcCompiler::ptxas_build() const
{
    auto ask = [this]() -> std::string {
        auto result = util::run_process({ptxas_.string(), "--version"});
        return result.exit_code == 0 ? build_of_version_output(result.output) : "";
    };
    return probe_ ? probe_->answer(ptxas_, "ptxas-build", ask) : ask();
}

// ptxas is NVRTC's own assembler when the NVRTC library carries ptxas's
// build string (both are built from one toolkit build, e.g.
// "cuda_13.0.r13.0/compiler.36424714_0"): then ptxas of NVRTC's PTX makes
// NVRTC's cubin. Read once per NVRTC file and ptxas build (probe records).
bool NvrtcCompiler::ptxas_is_nvrtcs() const
{
    std::call_once(ptxas_once_, [this] {
        if (ptxas_.empty() || file_.empty()) return;
        std::string build = ptxas_build();
        if (build.empty()) return;
        auto ask = [&]() -> std::string {
            try {
                return util::read_file(file_).find(build) != std::string::npos ? "yes" : "no";
            } catch (const Error&) {
                return "";
            }
        };
        std::string answer = probe_ ? probe_->answer(file_, "carries ptxas build " + build, ask) : ask();
        ptxas_matches_ = answer == "yes";
    });
    return ptxas_matches_;
}

namespace {

// NVRTC rejects a UTF-8 byte order mark that nvcc and editors accept.
const char* without_bom(const std::string& source)
{
    return source.rfind("\xEF\xBB\xBF", 0) == 0 ? source.c_str() + 3 : source.c_str();
}

// A missing, overloaded or template entry makes NVRTC fail inside its own
// generated name map; say what that means instead.
std::string explain_name_map_error(const std::string& log, const CudaCompileRequest& request)
{
    if (log.find("__nv_name_map") == std::string::npos) return log;
    if (request.entry_expression() != request.kernel)
        return request.source_file.string() + ": error: NVRTC cannot instantiate '" + request.entry_expression() +
               "': the template arguments do not fit __global__ " + request.kernel +
               " (check template-args in [tool.cunumpy-kernels])\n" + log;
    return request.source_file.string() + ": error: no unique __global__ function '" + request.kernel +
           "': the entry must be one __global__ void " + request.kernel +
           "(...); a template needs its arguments in [tool.cunumpy-kernels] template-args "
           "(other __global__ functions are ignored)\n" +
           log;
}

// NVRTC compiles device code alone, without the host C++ library: a header
// written for nvcc (host code, <iostream>, <vector>) fails here and only here.
std::string host_code_hint(const std::string& log, const CudaCompileRequest& request)
{
    bool missing_header = log.find("cannot open source file") != std::string::npos;
    bool header_error = false;
    std::string source = request.source_file.string() + ":";
    for (std::size_t at = log.find(": error"); at != std::string::npos && !header_error;
         at = log.find(": error", at + 1)) {
        std::size_t line_start = log.rfind('\n', at);
        line_start = line_start == std::string::npos ? 0 : line_start + 1;
        header_error = log.compare(line_start, source.size(), source) != 0;
    }
    if (!missing_header && !header_error) return "";
    return "\nnote: NVRTC compiles device code only, without the host C++ library; if a header holds host code "
           "or includes host-only headers, build with --compiler nvcc";
}

}  // namespace

CudaCompileOutput NvrtcCompiler::run_nvrtc(const CudaCompileRequest& request, const std::string& target) const
{
    auto start = std::chrono::steady_clock::now();
    const NvrtcApi& api = loaded().api;
    nvrtcProgram raw = nullptr;
    nvrtcResult status =
        api.create(&raw, without_bom(request.source), request.source_file.string().c_str(), 0, nullptr, nullptr);
    if (status != NVRTC_SUCCESS) throw ToolchainError(std::string("nvrtcCreateProgram: ") + api.error_string(status));
    Program program(api, raw);
    const std::string& entry = request.entry_expression();
    api.add_name(program.get(), entry.c_str());

    std::vector<std::string> options = {"-arch=" + target};
    options.insert(options.end(), request.options.begin(), request.options.end());
    for (const auto& dir : request.include_dirs) options.push_back("-I" + dir.string());
    auto toolkit = toolkit_include_dirs();
    options.push_back("-I" + toolkit[0].string());
    for (const auto& dir : request.system_include_dirs) options.push_back("-I" + dir.string());
    options.push_back("-I" + toolkit[1].string());
    for (const auto& file : request.pre_includes) options.push_back("--pre-include=" + file.string());
    std::vector<const char*> option_pointers;
    for (const auto& option : options) option_pointers.push_back(option.c_str());

    CudaCompileOutput output;
    status = api.compile(program.get(), static_cast<int>(option_pointers.size()), option_pointers.data());
    std::size_t log_size = 0;
    api.log_size(program.get(), &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) api.log(program.get(), log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    output.log = explain_name_map_error(to_file_line_diagnostics(log), request);
    if (status != NVRTC_SUCCESS) {
        if (output.log.empty()) output.log = api.error_string(status);
        output.log += host_code_hint(output.log, request);
        return output;
    }
    const char* lowered = nullptr;
    if (api.lowered_name(program.get(), entry.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) {
        output.log += "\nentry " + entry + " not found in " + request.source_file.string();
        return output;
    }
    output.entry_symbol = lowered;
    std::size_t size = 0;
    bool cubin = artifact_extension(target) == "cubin";
    (cubin ? api.cubin_size : api.ptx_size)(program.get(), &size);
    output.artifact.resize(size);
    (cubin ? api.cubin : api.ptx)(program.get(), output.artifact.data());
    if (!cubin)
        while (!output.artifact.empty() && output.artifact.back() == '\0') output.artifact.pop_back();
    output.ok = true;
    // A cubin compile runs NVRTC's own assembler too: its time is not the front end's alone.
    output.phases[cubin ? "front_end_and_ptxas" : "front_end"] = util::seconds_since(start);
    return output;
}

namespace {

// Options NVRTC applies while making PTX, which ptxas never sees: with any
// other, NVRTC may hand its assembler options of its own, and a separate
// ptxas would not make the same cubin.
bool acts_on_front_end_only(const std::string& option)
{
    static const char* const prefixes[] = {"-D", "-U", "-std=", "--std=", "-diag-", "--diag-", "-diag_", "--diag_"};
    static const char* const whole[] = {"-default-device", "--device-as-default-execution-space", "-w",
                                        "--disable-warnings"};
    return std::any_of(std::begin(prefixes), std::end(prefixes),
                       [&](const char* p) { return option.rfind(p, 0) == 0; }) ||
           std::find(std::begin(whole), std::end(whole), option) != std::end(whole);
}

}  // namespace

bool NvrtcCompiler::assembles_separately(const CudaCompileRequest& request) const
{
    return !ptxas_.empty() && std::all_of(request.options.begin(), request.options.end(), acts_on_front_end_only) &&
           ptxas_is_nvrtcs();
}

CudaCompileOutput NvrtcCompiler::assemble(const CudaCompileOutput& ptx, const CudaCompileRequest& request,
                                          const std::string& target) const
{
    auto start = std::chrono::steady_clock::now();
    CompilerScratch scratch;
    fs::path input = scratch.path() / (request.kernel + "." + virtual_architecture(target) + ".ptx");
    fs::path cubin = scratch.path() / (request.kernel + "." + target + ".cubin");
    util::write_file(input, ptx.artifact);
    auto result = util::run_process({ptxas_.string(), "-arch=" + target, "-o", cubin.string(), input.string()},
                                    scratch.path(), {{"TMPDIR", scratch.tmp().string()}}, environment_.inherited);
    CudaCompileOutput output;
    output.log = ptx.log;
    output.phases = ptx.phases;
    output.phases["ptxas"] = util::seconds_since(start);
    if (result.exit_code != 0) {
        output.log += (output.log.empty() ? "" : "\n") + request.source_file.string() + ": error: ptxas (" +
                      ptxas_.string() + ") failed on NVRTC's PTX for " + target + ":\n" + result.output;
        return output;
    }
    output.artifact = util::read_file(cubin);
    output.entry_symbol = ptx.entry_symbol;
    output.ok = true;
    return output;
}

CudaCompileOutput NvrtcCompiler::compile(const CudaCompileRequest& request) const
{
    return run_nvrtc(request, request.target);
}

std::vector<std::vector<std::string>> NvrtcCompiler::target_groups(const CudaCompileRequest& request,
                                                                   const std::vector<std::string>& targets) const
{
    if (!assembles_separately(request)) return CudaCompiler::target_groups(request, targets);
    std::vector<std::vector<std::string>> groups;
    std::vector<std::string> architectures;
    for (const auto& target : targets) {
        auto it = std::find(architectures.begin(), architectures.end(), virtual_architecture(target));
        if (it == architectures.end()) {
            architectures.push_back(virtual_architecture(target));
            groups.push_back({target});
        } else {
            groups[static_cast<std::size_t>(it - architectures.begin())].push_back(target);
        }
    }
    return groups;
}

std::vector<CudaCompileOutput> NvrtcCompiler::compile_targets(const CudaCompileRequest& request,
                                                              const std::vector<std::string>& targets) const
{
    if (!assembles_separately(request)) return CudaCompiler::compile_targets(request, targets);
    std::map<std::string, CudaCompileOutput> ptx;  // by virtual architecture
    std::vector<CudaCompileOutput> outputs;
    for (const auto& target : targets) {
        std::string architecture = virtual_architecture(target);
        if (!ptx.count(architecture)) ptx[architecture] = run_nvrtc(request, architecture);
        const CudaCompileOutput& front = ptx[architecture];
        if (target == architecture || !front.ok)
            outputs.push_back(front);
        else
            outputs.push_back(assemble(front, request, target));
    }
    return outputs;
}

}  // namespace ck
