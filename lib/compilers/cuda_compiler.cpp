#include "compilers/cuda_compiler.hpp"

#include "compilers/nvcc_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
#include "compilers/program_file.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/subprocess.hpp"

#include <cstdlib>
#include <regex>

namespace ck {

namespace fs = std::filesystem;

namespace {

// The toolkit the user named (cuda-root, $CUDA_PATH, $CUDA_HOME), with where
// it was named; empty when none was.
CudaToolkit named_cuda_root(const Config& config)
{
    if (!config.cuda_root.empty()) return {config.cuda_root, "cuda-root"};
    for (const char* name : {"CUDA_PATH", "CUDA_HOME"}) {
        const char* value = std::getenv(name);
        if (value && *value) return {value, std::string("$") + name};
    }
    return {};
}

// The toolkit folder above `nvcc` (links resolved, as CuPy's realpath of
// NVRTC does): one whose include/ holds cuda_runtime_api.h; empty when none.
fs::path toolkit_above(const fs::path& nvcc)
{
    std::error_code error;
    fs::path root = fs::canonical(nvcc, error).parent_path().parent_path();
    return !error && fs::is_regular_file(root / "include" / "cuda_runtime_api.h", error) ? root : fs::path();
}

// The toolkit of the nvcc in PATH: the one a wrapper script there hands over
// to (`exec /usr/local/cuda-13.0/bin/nvcc`), whose headers and NVRTC the
// compile uses, though the script's folder may look like a toolkit (links
// and a copy of include/ in /usr/local); else the one it lies in.
CudaToolkit toolkit_of_path_nvcc(const fs::path& nvcc)
{
    if (auto runs = wrapper_exec_target(nvcc))
        if (fs::path root = toolkit_above(*runs); !root.empty())
            return {root, "nvcc in PATH (" + nvcc.string() + ", a script running " + runs->string() + ")"};
    if (fs::path root = toolkit_above(nvcc); !root.empty()) return {root, "nvcc in PATH (" + nvcc.string() + ")"};
    throw ToolchainError("the nvcc in PATH, " + nvcc.string() +
                         ", lies in no CUDA toolkit (no ../include/cuda_runtime_api.h "
                         "beside its folder) and is no wrapper script whose `exec` names a toolkit's nvcc, so which "
                         "toolkit builds (and which CuPy uses) cannot be known; set CUDA_HOME (or CUDA_PATH, or the "
                         "config key cuda-root) to the toolkit it runs");
}

}  // namespace

CudaToolkit find_cuda_toolkit(const Config& config)
{
    CudaToolkit named = named_cuda_root(config);
    if (!named.root.empty()) return named;
    // A cluster's `module load cuda/12.x` sets only PATH: the nvcc there
    // names the toolkit, before the usual place.
    fs::path nvcc = util::find_in_path("nvcc");
    if (!nvcc.empty()) return toolkit_of_path_nvcc(nvcc);
    std::error_code error;
    fs::path usual = fs::canonical("/usr/local/cuda", error);
    return {error ? fs::path("/usr/local/cuda") : usual, "the default"};
}

fs::path cuda_root_of(const Config& config) { return find_cuda_toolkit(config).root; }

std::unique_ptr<CudaCompiler> make_cuda_compiler(const Config& config, const ToolProbe& probe)
{
    // A toolkit the user named is used or refused, never silently replaced:
    // PTX of a newer toolkit may not load on the driver the user targets.
    auto [named, where] = named_cuda_root(config);  // not the PATH's: a wrapper there may be anything
    std::error_code error;
    if (!named.empty() && !fs::is_directory(named, error))
        throw ToolchainError(where + " names " + named.string() +
                             ", which is not a folder; point it at a CUDA toolkit");
    if (config.compiler == CudaCompilerKind::nvcc) {
        if (!named.empty() && !fs::exists(named / "bin" / "nvcc", error))
            throw ToolchainError(where + " names " + named.string() + ", which has no bin/nvcc");
        return std::make_unique<NvccCompiler>(cuda_root_of(config), &probe);
    }
    auto nvrtc = std::make_unique<NvrtcCompiler>(cuda_root_of(config), &probe);
    if (!named.empty() && !nvrtc->found_in_root())
        throw ToolchainError(where + " names " + named.string() + ", which has no lib64/libnvrtc.so.13 or .12");
    return nvrtc;
}

std::string to_file_line_diagnostics(const std::string& log)
{
    static const std::regex location(R"(^([^\s(][^(\n]*)\((\d+)\): )", std::regex::multiline);
    return std::regex_replace(log, location, "$1:$2: ");
}

std::vector<std::vector<std::string>> CudaCompiler::target_groups(const CudaCompileRequest&,
                                                                  const std::vector<std::string>& targets) const
{
    std::vector<std::vector<std::string>> groups;
    for (const auto& target : targets) groups.push_back({target});
    return groups;
}

std::vector<CudaCompileOutput> CudaCompiler::compile_targets(const CudaCompileRequest& request,
                                                             const std::vector<std::string>& targets) const
{
    std::vector<CudaCompileOutput> outputs;
    for (const auto& target : targets) {
        CudaCompileRequest one = request;
        one.target = target;
        outputs.push_back(compile(one));
    }
    return outputs;
}

std::string virtual_architecture(const std::string& target)
{
    auto underscore = target.find('_');
    return underscore == std::string::npos ? target : "compute" + target.substr(underscore);
}

std::string artifact_extension(const std::string& target) { return target.rfind("compute_", 0) == 0 ? "ptx" : "cubin"; }

}  // namespace ck
