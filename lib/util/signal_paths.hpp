// Paths a signal handler must clean up when the tool is stopped (SIGINT,
// SIGTERM): the compilers' scratch folders, the build locks held. Fixed slots
// of plain characters, since a handler may not allocate or lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <string_view>

namespace ck::util {

class SignalPaths {
public:
    /// Registers `path` with an optional `token` (a build lock's: the text
    /// the file must still hold to be ours); returns its slot, or -1 when
    /// every slot is taken or the path or token is too long (the caller's
    /// destructor then cleans up alone).
    int add(const std::filesystem::path& path, std::string_view token = {}) noexcept;
    /// Frees a slot add() returned (-1 is ignored).
    void remove(int slot) noexcept;
    /// Calls `visit(path, token)` for every registered path (token "" when
    /// none was given); async-signal-safe when `visit` is.
    void for_each(void (*visit)(const char* path, const char* token)) noexcept;

private:
    static constexpr int max_slots = 64;
    static constexpr std::size_t max_path = 1024;
    static constexpr std::size_t max_token = 384;  ///< a host name (255) and a few numbers
    std::atomic<int> state_[max_slots] = {};       ///< 0 free, 1 being filled, 2 holds a path
    char path_[max_slots][max_path] = {};
    char token_[max_slots][max_token] = {};
};

/// Whether the file `path` holds `text` within its first 4 KiB, read with
/// open, read and close only (no allocation): async-signal-safe, for a
/// handler that must remove a lock file only while it is still its own.
/// False when the file cannot be read.
bool file_holds(const char* path, const char* text) noexcept;

}  // namespace ck::util
