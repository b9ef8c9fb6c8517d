// nvcc behind the CudaCompiler interface.
#pragma once

#include "compilers/cuda_compiler.hpp"

namespace ck {

class NvccCompiler : public CudaCompiler {
public:
    /// Finds `<cuda_root>/bin/nvcc`, else nvcc in PATH; throws ToolchainError when neither exists.
    NvccCompiler(const std::filesystem::path& cuda_root, const ToolProbe* probe);

    std::string identity() const override;
    std::optional<std::string> remembered_identity() const override;
    CudaCompileOutput compile(const CudaCompileRequest& request) const override;

private:
    std::filesystem::path nvcc_;
    const ToolProbe* probe_;
};

}  // namespace ck
