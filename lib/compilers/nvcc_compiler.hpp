// nvcc behind the CudaCompiler interface.
#pragma once

#include "compilers/cuda_compiler.hpp"
#include "util/subprocess.hpp"

namespace ck {

/// One row of `nvcc --time`'s CSV: a phase of the compile ("cicc",
/// "ptxas", "gcc (preprocessing 1)"), the file it wrote, the architecture it
/// ran for (`compute_90` for cicc, `sm_90` for ptxas) and its time.
struct NvccPhase {
    std::string name;
    std::string output;
    std::string architecture;
    double seconds = 0;
};

/// The rows of `nvcc --time FILE`'s CSV (columns: source file, phase name,
/// input files, output file, arch, tool, metric, unit; the first line names
/// them); rows whose unit is not "ms" are left out. Values have no commas:
/// the files are in the compiler's scratch folder.
std::vector<NvccPhase> parse_nvcc_phase_times(const std::string& csv);

class NvccCompiler : public CudaCompiler {
public:
    /// Finds `<cuda_root>/bin/nvcc`, else nvcc in PATH; throws ToolchainError
    /// when neither exists. Reads the environment and nvcc.profile (beside
    /// nvcc) once, here.
    NvccCompiler(const std::filesystem::path& cuda_root, const ToolProbe* probe,
                 const EnvironmentReader& read = process_environment());

    /// "nvcc <last line of --version> (sha256 <16 hex>[, a script ...])":
    /// the version and the content of the nvcc file that runs
    /// (program_digest), remembered under its stat. Throws ToolchainError
    /// when nvcc fails to start or cannot be read.
    std::string identity() const override;
    std::optional<std::string> remembered_identity() const override;
    /// "host gcc (Debian 12.2.0-14) 12.2.0 (sha256 <16 hex>)": the first line
    /// of `--version` of the compiler nvcc runs and its file's content
    /// (program_digest): `ccbin` (a file, a folder holding gcc, or a name in
    /// PATH), else NVCC_CCBIN, else gcc in PATH.
    std::optional<std::string> host_compiler_identity(const std::optional<std::string>& ccbin,
                                                      bool may_start) const override;
    std::vector<std::filesystem::path> toolkit_include_dirs() const override;
    const CompilerEnvironment& environment() const override { return environment_; }
    /// Compiles with `-MMD`: every file nvcc reports reading, but the source
    /// and the toolkit's headers, must be one of `request.headers`, else the
    /// job fails ("scanner bug: ...") and nothing is published.
    CudaCompileOutput compile(const CudaCompileRequest& request) const override;
    /// All targets in one group: one nvcc run compiles them.
    std::vector<std::vector<std::string>> target_groups(const CudaCompileRequest& request,
                                                        const std::vector<std::string>& targets) const override;
    /// One nvcc process for all `targets`: with several, a `-fatbin` with one
    /// `-gencode` per target, whose cubins and PTX nvcc keeps (`-keep`) and
    /// names in its `--time` list, so each front end and the host
    /// preprocessing run once. Phase times come from that list, and each
    /// target's log is the whole run's. When that run fails, each target is
    /// compiled alone, so that the failure names its target. The `-MMD`
    /// check is as for compile().
    std::vector<CudaCompileOutput> compile_targets(const CudaCompileRequest& request,
                                                   const std::vector<std::string>& targets) const override;

private:
    CudaCompileOutput target_output(const CudaCompileRequest& request, const std::string& target,
                                    std::filesystem::path file, const std::vector<NvccPhase>& phases,
                                    const CudaCompileOutput& shared) const;

    std::filesystem::path nvcc_;
    std::filesystem::path toolkit_;  ///< canonical folder above nvcc's bin/
    const ToolProbe* probe_;
    CompilerEnvironment environment_;
};

/// The prerequisites of a Make rule as `nvcc -MMD -MF` writes it: the files
/// after `target :`, continuation lines joined, `\ ` read as a space.
std::vector<std::string> parse_make_dependencies(const std::string& text);

}  // namespace ck
