#include "target_options.hpp"

namespace ck::cli {

void TargetOptions::add_to(CLI::App& command)
{
    command.add_option("--arch", architectures, "Targets, comma-separated, e.g. sm_80,sm_90 (default sm_80,sm_90)")
        ->type_name("LIST")
        ->delimiter(',')
        ->allow_extra_args(false);
    command.add_flag("--ptx", ptx,
                     "Emit PTX of the newest architecture (the default, unless the config says ptx = false)");
    command.add_flag("--no-ptx", no_ptx, "Do not emit PTX of the newest architecture");
    command.add_option("--compiler", compiler, "nvrtc (in-process, default) or nvcc");
    command
        .add_option("-X,--compiler-option", options,
                    "Extra compiler option, e.g. --compiler-option=-DNDEBUG (repeatable)")
        ->allow_extra_args(false);
    command
        .add_option("--verbatim-option", verbatim,
                    "Compiler option passed unchecked, keyed by its spelling only (repeatable); see cunumpy-kernels(1)")
        ->allow_extra_args(false);
}

}  // namespace ck::cli
