// Runs a child process and collects its output. Used by the CLI's compilers
// (nvcc, the Python probe); the runtime library never starts processes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ck::util {

struct ProcessResult {
    int exit_code = -1;      ///< exit status, or 128 + signal when killed
    std::string output;      ///< stdout and stderr, interleaved as written
    bool timed_out = false;  ///< run_process_within: stopped at its deadline
};

/// Environment variables to set in a child, over the parent's; a variable
/// without a value is removed.
using EnvironmentOverrides = std::vector<std::pair<std::string, std::optional<std::string>>>;

/// The names of the parent's variables a child inherits; a name ending in
/// `*` keeps every variable it starts (`LC_*`). Empty: all of them.
using InheritedVariables = std::vector<std::string>;

/// Runs argv[0] (searched in PATH) in `cwd` (empty: the current folder) with
/// stdin from /dev/null, the parent's environment (only the `inherited`
/// variables, when that is not empty) and `environment` set over it, in a
/// process group of its own. The child and its own children (cicc and ptxas
/// under nvcc) die with this process on every exit path, SIGKILL included:
/// the child through PR_SET_PDEATHSIG, the rest of its group through a guard
/// process that kills the group when this process's end of a pipe closes.
/// What is left of the group when the child exits is killed too. Throws
/// ToolchainError when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd = {},
                          const EnvironmentOverrides& environment = {}, const InheritedVariables& inherited = {});

/// run_process with a deadline the parent enforces, whatever the child does
/// with its signals: the child's whole process group (its own children
/// too) gets SIGKILL when `seconds` have passed (`timed_out` is then set),
/// and once the child has exited, what is left of its group is killed too,
/// so a grandchild holding the output pipe keeps no one waiting. A
/// grandchild that left the group (setsid) is not waited for past the
/// deadline either, nor more than a second after the child ended.
ProcessResult run_process_within(const std::vector<std::string>& argv, const std::filesystem::path& cwd, int seconds);

/// Sends SIGTERM to every child process run_process has running, each in its
/// own process group (nvcc's cicc and ptxas included), and returns once every
/// group is empty: after 2 s the rest get SIGKILL and 1 s more. Async-signal-
/// safe: the CLI calls it from its SIGINT/SIGTERM handler so an interrupted
/// build leaves no compiler running, and none writing into a scratch folder
/// the handler removes next.
void terminate_children();

/// Whether terminate_children() has run in this process: the process is
/// being stopped. run_process then starts nothing (it returns 128 + SIGTERM
/// at once), and what a compiler's end would record as a failure is not one:
/// EntryStore records no failure then.
bool stop_requested();

/// Searches PATH for `program` (a name holding a slash is taken as a path);
/// returns an absolute path, empty when not found, not an executable file, or
/// not accessible (a folder on its path that this user may not search).
/// Never throws.
std::filesystem::path find_in_path(const std::string& program);

}  // namespace ck::util
