// Options nvcc hands to the programs it runs: `-Xcompiler` to the host
// compiler (gcc, which also preprocesses device code) and `-Xptxas` to ptxas.
// Each comma-separated part is classified from a table of that program's
// documented options (gcc's manual, `ptxas --help`, CUDA 13.0): keyed as
// written, or refused before anything compiles when it reads a file the key
// does not hold, changes the include search, or sets the target or output.
#pragma once

#include <string>

namespace ck {

/// Checks `value`, the operand of `-Xcompiler` (spelled `option`, from
/// `where`): every part must be a gcc option that changes code generation,
/// warnings or macros (`-O2`, `-fno-math-errno`, `-Wall`, `-DX`, `-march=...`).
/// Throws UsageError naming the part and what to use instead for an include
/// or file-reading option (`-I`, `-include`, `-imacros`, `@FILE`, `--sysroot`,
/// `-iprefix`, `-specs`, `-B`, `-fplugin`, `-fprofile-use`, ...), an output
/// option (`-o`, `-E`, `-M...`), and for an option not in the table (naming
/// `--verbatim-option`).
void check_host_compiler_options(const std::string& value, const std::string& option, const std::string& where);

/// Checks `value`, the operand of `-Xptxas`, against ptxas's documented
/// options. Throws UsageError for the target (`-arch`), output (`-o`, `-c`),
/// device debug (`-g`), options files (`-optf`), and unknown options.
void check_ptxas_options(const std::string& value, const std::string& option, const std::string& where);

/// "pass it knowingly with --verbatim-option=X (config key verbatim-options)
/// ...": the end of every message refusing an option this tool does not know.
std::string verbatim_door(const std::string& option);

}  // namespace ck
