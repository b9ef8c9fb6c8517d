#include "builder/target_flags.hpp"

#include "cunumpy_kernels/error.hpp"

#include <filesystem>

namespace ck {

void TargetFlags::apply(Config& config) const
{
    if (!architectures.empty()) {
        config.architectures.clear();
        for (const auto& arch : architectures) {
            if (arch.empty()) continue;
            validate_architecture(arch, "--arch");
            config.architectures.push_back(arch);
        }
    }
    if (ptx && no_ptx) throw UsageError("--ptx and --no-ptx contradict each other");
    if (ptx) config.ptx = true;
    if (no_ptx) config.ptx = false;
    if (compiler) config.compiler = parse_compiler_kind(*compiler, "--compiler");
    auto checked = resolve_compiler_options(options, std::filesystem::current_path(), "--compiler-option");
    config.options.insert(config.options.end(), checked.begin(), checked.end());
    config.options_as_written.insert(config.options_as_written.end(), options.begin(), options.end());
    for (const auto& option : verbatim) {
        config.options.push_back("--verbatim-option=" + option);
        config.options_as_written.push_back(option);
    }
}

void select_one_target(Config& config, const std::string& target, const std::string& flag)
{
    bool ptx = target.rfind("compute_", 0) == 0;
    if (!ptx && target.rfind("sm_", 0) != 0)
        throw UsageError(flag + " " + target + " is not a target such as sm_90 or compute_90");
    validate_architecture(target, flag);
    // `compute_90` is the PTX --ptx adds to sm_90; `compute_90a` is PTX only
    // a 9.0 device runs, which --ptx never adds (it adds plain compute_90):
    // that one is named as itself.
    bool suffixed = target.back() == 'a' || target.back() == 'f';
    config.architectures = {ptx && !suffixed ? "sm_" + target.substr(8) : target};
    config.ptx = ptx && !suffixed;
}

}  // namespace ck
