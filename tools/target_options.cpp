#include "target_options.hpp"

#include "cunumpy_kernels/error.hpp"

namespace ck::cli {

void TargetOptions::add_to(CLI::App& command)
{
    command.add_option("--arch", architectures, "Targets, e.g. sm_80,sm_90 (default sm_80,sm_90)")
        ->delimiter(',')
        ->allow_extra_args(false);
    command.add_flag("--ptx", ptx, "PTX of the newest architecture (the default, unless the config says ptx = false)");
    command.add_flag("--no-ptx", no_ptx, "No PTX of the newest architecture");
    command.add_option("--compiler", compiler, "nvrtc (default) or nvcc");
    command.add_option("-X,--compiler-option", options, "Extra compiler option (repeatable)")->allow_extra_args(false);
}

void TargetOptions::apply(Config& config) const
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
    // Relative include folders are the working folder's, as for --include-dir.
    auto checked = resolve_compiler_options(options, std::filesystem::current_path(), "--compiler-option");
    config.options.insert(config.options.end(), checked.begin(), checked.end());
}

}  // namespace ck::cli
