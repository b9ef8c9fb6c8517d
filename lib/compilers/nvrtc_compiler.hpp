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
    /// search path, as nvcc.profile puts them on nvcc's. `<cuda_root>/bin/ptxas`,
    /// when it is there, assembles cubins (compile_targets) and is named in
    /// identity(), so keys say which assembler made a cubin.
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
    /// With the toolkit's ptxas (`<cuda_root>/bin/ptxas`) and only options
    /// that act on the front end (assembles_separately()): the targets of one
    /// virtual architecture form a group. Else each target alone.
    std::vector<std::vector<std::string>> target_groups(const CudaCompileRequest& request,
                                                        const std::vector<std::string>& targets) const override;
    /// One NVRTC run per virtual architecture makes its PTX (the `compute_XX`
    /// target's artifact), and ptxas turns that PTX into each `sm_XX` cubin,
    /// as NVRTC does inside a cubin compile: the machine code is the same
    /// (tests/unit/test_nvrtc_split.cpp), the front end runs once instead of
    /// once per target. Without ptxas, or with other options, one NVRTC run
    /// per target.
    std::vector<CudaCompileOutput> compile_targets(const CudaCompileRequest& request,
                                                   const std::vector<std::string>& targets) const override;
    /// Whether cubins of `request` are made by NVRTC's PTX and ptxas: ptxas
    /// was found and every option is one NVRTC applies in the front end
    /// (`-D`, `-U`, `-std=`, `-default-device`, `-w`, `-diag-*`).
    bool assembles_separately(const CudaCompileRequest& request) const;

private:
    struct Loaded;
    const Loaded& loaded() const;
    std::string version_now() const;
    std::string ptxas_identity(bool may_start) const;
    CudaCompileOutput run_nvrtc(const CudaCompileRequest& request, const std::string& target) const;
    CudaCompileOutput assemble(const CudaCompileOutput& ptx, const CudaCompileRequest& request,
                               const std::string& target) const;

    std::filesystem::path cuda_root_;
    const ToolProbe* probe_;
    std::filesystem::path file_;
    std::filesystem::path ptxas_;  ///< `<cuda_root>/bin/ptxas`, or empty when there is none
    CompilerEnvironment environment_;
    mutable std::once_flag load_once_;
    mutable std::unique_ptr<Loaded> loaded_;
    mutable std::once_flag identity_once_;
    mutable std::string identity_;
};

}  // namespace ck
