// NVRTC behind the CudaCompiler interface.
#pragma once

#include "compilers/cuda_compiler.hpp"

#include <memory>
#include <mutex>

namespace ck {

class NvrtcCompiler : public CudaCompiler {
public:
    /// Looks for libnvrtc in `cuda_root` (lib64/, lib/), else by soname.
    /// `probe` may be null (no caching of the version). The toolkit's
    /// `include` and `include/cccl` folders of `cuda_root` are on NVRTC's
    /// search path, as nvcc.profile puts them on nvcc's.
    NvrtcCompiler(std::filesystem::path cuda_root, const ToolProbe* probe,
                  const EnvironmentReader& read = process_environment());
    ~NvrtcCompiler() override;

    std::string identity() const override;
    /// Whether libnvrtc was found in the toolkit folder (else the soname is tried).
    bool found_in_root() const { return !file_.empty(); }
    std::optional<std::string> remembered_identity() const override;
    std::vector<std::filesystem::path> toolkit_include_dirs() const override;
    const CompilerEnvironment& environment() const override { return environment_; }
    /// NVRTC has no `-isystem`: those folders are given as `-I` after the
    /// toolkit's include folder, which keeps nvcc's order.
    CudaCompileOutput compile(const CudaCompileRequest& request) const override;

private:
    struct Loaded;
    const Loaded& loaded() const;
    std::string version_now() const;

    std::filesystem::path cuda_root_;
    const ToolProbe* probe_;
    std::filesystem::path file_;
    CompilerEnvironment environment_;
    mutable std::once_flag load_once_;
    mutable std::unique_ptr<Loaded> loaded_;
    mutable std::once_flag identity_once_;
    mutable std::string identity_;
};

}  // namespace ck
