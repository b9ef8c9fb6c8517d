#include "struct_headers/cubin_layout_check.hpp"

#include "compilers/artifact_check.hpp"
#include "compilers/cubin_parameters.hpp"
#include "runtime/cuda_kernel.hpp"

namespace ck {

KernelLayout runtime_layout(const KernelSource& kernel, const Config& config, const StructLayouts& structs)
{
    return {kernel.name, read_cuda_kernel_facts(kernel, config).parameters, structs};
}

void check_cubin_layout(const std::string& cubin, const std::string& target, const std::string& entry_symbol,
                        const std::string& what, const KernelLayout& expected, bool require_records)
{
    if (target.rfind("compute_", 0) == 0 || !expected.parameters) return;
    auto fail = [&](const std::string& message) {
        throw ArtifactCheckError(ArtifactCheck::parameter_layout, message,
                                 what + " for " + target + ": check 'parameter layout' failed: " + message);
    };
    auto found = read_cubin_parameters(cubin, entry_symbol, what);
    if (!found && !require_records) return;
    if (!found) fail("no section .nv.info." + entry_symbol + " describes the entry's parameters");
    auto packed = packed_layout(*expected.parameters, expected.structs, parameter_bank_offset(target));
    std::string mismatch = layout_mismatch(expected.kernel, *expected.parameters, packed, *found);
    if (!mismatch.empty()) fail(mismatch);
}

}  // namespace ck
