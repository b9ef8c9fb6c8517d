// Names of the temporary folders that entries are written in. The name holds
// the host and pid of the writer so that a later run can tell a dead writer's
// leftovers from a live one's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ck {

inline constexpr const char* temporary_folder_name = ".cunumpy-kernels-tmp";

/// `<scope>.<pid>.<counter>.<random>` (process_scope()), unique within and
/// across processes.
std::string unique_temporary_name();

struct TemporaryOwner {
    std::string host;
    long pid = 0;
};

/// The writer named in a temporary folder's name, if the name has that form.
std::optional<TemporaryOwner> owner_of_temporary(const std::string& name);

/// Whether `folder`, named `<scope>.<pid>.<n>.<random>` (`name`, after any
/// prefix), was left by a process of this scope that no longer runs, or is
/// older than `max_age_seconds` (another scope's, or a reused pid's).
bool is_stale_temporary(const std::filesystem::path& folder, const std::string& name, double max_age_seconds);

/// This machine's host name.
std::string host_name();

/// Where a process id names one process: `<host>~<boot>~<pid namespace>`,
/// from the host name, the kernel's boot id and the inode of
/// /proc/self/ns/pid. A container that shares the host's name but not its
/// process ids (apptainer --pid, docker --uts=host) has a scope of its own,
/// and so has a machine that shares another's name. Only within its own
/// scope is a process found gone by its id (kill(pid, 0)).
std::string process_scope();

}  // namespace ck
