// Paths a signal handler must clean up when the tool is stopped (SIGINT,
// SIGTERM): the compilers' scratch folders, the build locks held. Fixed slots
// of plain characters, since a handler may not allocate or lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>

namespace ck::util {

class SignalPaths {
public:
    /// Registers `path`; returns its slot, or -1 when every slot is taken or
    /// the path is too long (the caller's destructor then cleans up alone).
    int add(const std::filesystem::path& path) noexcept;
    /// Frees a slot add() returned (-1 is ignored).
    void remove(int slot) noexcept;
    /// Calls `visit(path)` for every registered path; async-signal-safe when
    /// `visit` is.
    void for_each(void (*visit)(const char* path)) noexcept;

private:
    static constexpr int max_slots = 64;
    static constexpr std::size_t max_path = 1024;
    std::atomic<int> state_[max_slots] = {};  ///< 0 free, 1 being filled, 2 holds a path
    char path_[max_slots][max_path] = {};
};

}  // namespace ck::util
