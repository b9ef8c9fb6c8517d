#include "util/signal_paths.hpp"

#include <cstring>

namespace ck::util {

int SignalPaths::add(const std::filesystem::path& path) noexcept
{
    if (path.native().size() >= max_path) return -1;
    for (int slot = 0; slot < max_slots; ++slot) {
        int expected_free = 0;
        if (!state_[slot].compare_exchange_strong(expected_free, 1)) continue;
        std::memcpy(path_[slot], path.c_str(), path.native().size() + 1);
        state_[slot].store(2);
        return slot;
    }
    return -1;
}

void SignalPaths::remove(int slot) noexcept
{
    if (slot >= 0 && slot < max_slots) state_[slot].store(0);
}

void SignalPaths::for_each(void (*visit)(const char* path)) noexcept
{
    for (int slot = 0; slot < max_slots; ++slot)
        if (state_[slot].load() == 2) visit(path_[slot]);
}

}  // namespace ck::util
