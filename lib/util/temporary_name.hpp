// Names of the temporary folders that entries are written in. The name holds
// the host and pid of the writer so that a later run can tell a dead writer's
// leftovers from a live one's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ck {

inline constexpr const char* temporary_folder_name = ".cunumpy-kernels-tmp";

/// `<host>.<pid>.<counter>.<random>`, unique within and across processes.
std::string unique_temporary_name();

struct TemporaryOwner {
    std::string host;
    long pid = 0;
};

/// The writer named in a temporary folder's name, if the name has that form.
std::optional<TemporaryOwner> owner_of_temporary(const std::string& name);

/// Whether `folder`, named `<host>.<pid>.<n>.<random>` (`name`, after any
/// prefix), was left by a process of this host that no longer runs, or is
/// older than `max_age_seconds` (another host's, or a reused pid's).
bool is_stale_temporary(const std::filesystem::path& folder, const std::string& name, double max_age_seconds);

/// This machine's host name.
std::string host_name();

}  // namespace ck
