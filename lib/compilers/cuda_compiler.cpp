#include "compilers/cuda_compiler.hpp"

#include "compilers/nvcc_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
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

}  // namespace

CudaToolkit find_cuda_toolkit(const Config& config)
{
    CudaToolkit named = named_cuda_root(config);
    if (!named.root.empty()) return named;
    // As CuPy (cupy/_environment.py): the folder above the nvcc in PATH, as
    // a cluster's `module load cuda/12.x` sets it, before the usual place.
    fs::path nvcc = util::find_in_path("nvcc");
    if (!nvcc.empty()) return {nvcc.parent_path().parent_path(), "nvcc in PATH (" + nvcc.string() + ")"};
    return {"/usr/local/cuda", "the default"};
}

fs::path cuda_root_of(const Config& config)
{
    return find_cuda_toolkit(config).root;
}

std::unique_ptr<CudaCompiler> make_cuda_compiler(const Config& config, const ToolProbe& probe)
{
    // A toolkit the user named is used or refused, never silently replaced:
    // PTX of a newer toolkit may not load on the driver the user targets.
    auto [named, where] = named_cuda_root(config);  // not the PATH's: a wrapper there may be anything
    std::error_code error;
    if (!named.empty() && !fs::is_directory(named, error))
        throw ToolchainError(where + " names " + named.string() + ", which is not a folder; point it at a CUDA toolkit");
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

std::string artifact_extension(const std::string& target)
{
    return target.rfind("compute_", 0) == 0 ? "ptx" : "cubin";
}

}  // namespace ck
