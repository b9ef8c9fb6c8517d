// A compiler as the key sees it: the content of the file that runs, not only
// the version line it prints (ccache's compiler_check=content). A site's
// wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc -DX "$@"`) prints the
// version of what it runs but may add flags of its own: its text is keyed,
// and so is the file it hands over to, when the script names one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ck {

class ToolProbe;

/// Whether `file` starts with `#!` (a script the kernel runs through an
/// interpreter). False when it cannot be read.
bool is_script(const std::filesystem::path& file);

/// The file a wrapper script hands over to: the absolute path that each of
/// its `exec` commands names (`exec /x/bin/nvcc "$@"`, options of exec and
/// quotes skipped), when they all name the same regular file. Nothing when
/// `file` is no script, has no such `exec`, or names a variable or a PATH
/// name there, or several files: then what it runs cannot be known.
std::optional<std::filesystem::path> wrapper_exec_target(const std::filesystem::path& file);

/// "sha256 <16 hex>" of `file`'s content, followed, for a wrapper script,
/// by ", a script running sha256 <16 hex>" of the file it execs
/// (wrapper_exec_target). Digests are remembered in `probe` under each
/// file's stat, so a warm build hashes nothing; with `may_read` false only
/// remembered digests are used, and nothing is returned when one is not
/// remembered. Nothing too when `file` cannot be read.
std::optional<std::string> program_digest(const std::filesystem::path& file, const ToolProbe* probe, bool may_read);

}  // namespace ck
