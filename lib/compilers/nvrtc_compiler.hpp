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
    /// when it is there and of NVRTC's release, assembles the cubins of
    /// compile_targets().
    NvrtcCompiler(std::filesystem::path cuda_root, const ToolProbe* probe,
                  const EnvironmentReader& read = process_environment());
    ~NvrtcCompiler() override;

    std::string identity() const override;
    /// Whether libnvrtc was found in the toolkit folder (else the soname is tried).
    bool found_in_root() const { return !file_.empty(); }
    std::optional<std::string> remembered_identity() const override;
    std::vector<std::filesystem::path> toolkit_include_dirs() const override;
    const CompilerEnvironment& environment() const override { return environment_; }
    /// One NVRTC run, in-process (the runtime's build on a miss starts no
    /// process). NVRTC has no `-isystem`: those folders are given as `-I`
    /// after the toolkit's include folder, which keeps nvcc's order.
    CudaCompileOutput compile(const CudaCompileRequest& request) const override;
    /// With the toolkit's ptxas (`<cuda_root>/bin/ptxas`) and only options
    /// that act on the front end (assembles_separately()): the targets of one
    /// virtual architecture form a group. Else each target alone.
    std::vector<std::vector<std::string>> target_groups(const CudaCompileRequest& request,
                                                        const std::vector<std::string>& targets) const override;
    /// One NVRTC run per virtual architecture makes its PTX (the `compute_XX`
    /// target's artifact), and ptxas turns that PTX into each `sm_XX` cubin,
    /// as NVRTC does inside a cubin compile: the machine code is the same
    /// (tests/unit/test_nvrtc_compiler.cpp; only the toolkit note differs),
    /// so the key is NVRTC's either way, and the front end runs once instead
    /// of once per target. Otherwise (assembles_separately() false) one NVRTC
    /// run per target.
    std::vector<CudaCompileOutput> compile_targets(const CudaCompileRequest& request,
                                                   const std::vector<std::string>& targets) const override;
    /// Whether compile_targets() makes the cubins of `request` from NVRTC's
    /// PTX with ptxas: ptxas was found, the NVRTC library of the toolkit
    /// folder carries ptxas's build string (`ptxas --version`: "Build
    /// cuda_13.0.r13.0/compiler.36424714_0"), so ptxas is the assembler NVRTC
    /// has inside, and every
    /// option is one NVRTC applies in the front end (`-D`, `-U`, `-std=`,
    /// `-default-device`, `-w`, `-diag-*`). Asks ptxas its version once per
    /// ptxas file (the probe record).
    bool assembles_separately(const CudaCompileRequest& request) const;

private:
    struct Loaded;
    const Loaded& loaded() const;
    std::string version_now() const;
    std::string ptxas_build() const;
    bool ptxas_is_nvrtcs() const;
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
    mutable std::once_flag ptxas_once_;
    mutable bool ptxas_matches_ = false;
    mutable std::once_flag identity_once_;
    mutable std::string identity_;
};

}  // namespace ck
