// The target flags on a command line (--arch, --ptx, --no-ptx, --compiler,
// -X): parsed here, applied by the library (builder/target_flags.hpp), so
// that `status` reads the cache for exactly what `build` with the same flags
// would produce.
#pragma once

#include "builder/target_flags.hpp"

#include <CLI/CLI.hpp>

namespace ck::cli {

struct TargetOptions : TargetFlags {
    void add_to(CLI::App& command);
};

}  // namespace ck::cli
