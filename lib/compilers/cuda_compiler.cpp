#include "compilers/cuda_compiler.hpp"

#include "compilers/nvcc_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"

#include <cstdlib>
#include <regex>

namespace ck {

namespace fs = std::filesystem;

fs::path cuda_root_of(const Config& config)
{
    if (!config.cuda_root.empty()) return config.cuda_root;
    for (const char* name : {"CUDA_HOME", "CUDA_PATH"}) {
        const char* value = std::getenv(name);
        if (value && *value) return value;
    }
    return "/usr/local/cuda";
}

std::unique_ptr<CudaCompiler> make_cuda_compiler(const Config& config, const ToolProbe& probe)
{
    if (config.compiler == CudaCompilerKind::nvcc) return std::make_unique<NvccCompiler>(cuda_root_of(config), &probe);
    return std::make_unique<NvrtcCompiler>(cuda_root_of(config), &probe);
}

std::string to_file_line_diagnostics(const std::string& log)
{
    static const std::regex location(R"(^([^\s(][^(\n]*)\((\d+)\): )", std::regex::multiline);
    return std::regex_replace(log, location, "$1:$2: ");
}

std::string artifact_extension(const std::string& target)
{
    return target.rfind("compute_", 0) == 0 ? "ptx" : "cubin";
}

}  // namespace ck
