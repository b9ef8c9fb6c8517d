#include "struct_headers/unchecked_structs.hpp"

#include "runtime/cuda_kernel.hpp"
#include "util/text.hpp"

#include <map>

namespace ck {

namespace {

// The kernels that take one struct by value, in walk order.
struct StructUse {
    std::filesystem::path first_file;
    std::vector<std::string> kernels;
};

std::string listed(const std::vector<std::string>& names)
{
    constexpr std::size_t shown = 3;
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < shown; ++i) text += (i ? ", " : "") + names[i];
    if (names.size() > shown) text += ", ...";
    return text;
}

}  // namespace

std::vector<std::string> unchecked_struct_warnings(const std::vector<KernelSource>& kernels, const Config& config,
                                                   const StructLayouts& structs)
{
    std::map<std::string, StructUse> unchecked;
    for (const auto& kernel : kernels) {
        if (!kernel.cuda_file) continue;
        CudaKernelFacts facts = read_cuda_kernel_facts(kernel, config);
        if (!facts.parameters) continue;
        for (const auto& parameter : *facts.parameters) {
            if (parameter.kind != ParameterKind::structure || structs.count(parameter.ctype)) continue;
            StructUse& use = unchecked[parameter.ctype];
            if (use.kernels.empty()) use.first_file = *kernel.cuda_file;
            if (use.kernels.empty() || use.kernels.back() != kernel.module) use.kernels.push_back(kernel.module);
        }
    }
    std::vector<std::string> warnings;
    for (const auto& [name, use] : unchecked)
        warnings.push_back(use.first_file.string() + ": struct " + name + " is passed by value to " +
                           util::counted(use.kernels.size(), "kernel") + " (" + listed(use.kernels) +
                           ") but no header in struct-headers defines it, so its layout is checked against neither "
                           "its Python definition nor the cubins; add the header that defines it, with its writer, "
                           "to struct-headers in pyproject.toml");
    return warnings;
}

}  // namespace ck
