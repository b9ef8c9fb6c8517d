#include "util/signal_paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ck::util {

int SignalPaths::add(const std::filesystem::path& path, std::string_view token) noexcept
{
    if (path.native().size() >= max_path || token.size() >= max_token) return -1;
    for (int slot = 0; slot < max_slots; ++slot) {
        int expected_free = 0;
        if (!state_[slot].compare_exchange_strong(expected_free, 1)) continue;
        std::memcpy(path_[slot], path.c_str(), path.native().size() + 1);
        // An empty string_view may hold a null data(), which memcpy must
        // never see, even for zero bytes.
        if (!token.empty()) std::memcpy(token_[slot], token.data(), token.size());
        token_[slot][token.size()] = '\0';
        state_[slot].store(2);
        return slot;
    }
    return -1;
}

void SignalPaths::remove(int slot) noexcept
{
    if (slot >= 0 && slot < max_slots) state_[slot].store(0);
}

void SignalPaths::for_each(void (*visit)(const char* path, const char* token)) noexcept
{
    for (int slot = 0; slot < max_slots; ++slot)
        if (state_[slot].load() == 2) visit(path_[slot], token_[slot]);
}

namespace {

// strstr over a buffer that holds no terminator; memmem is not on POSIX's
// list of async-signal-safe functions.
bool contains(const char* data, std::size_t size, const char* text, std::size_t length)
{
    for (std::size_t at = 0; at + length <= size; ++at)
        if (std::memcmp(data + at, text, length) == 0) return true;
    return false;
}

}  // namespace

bool file_holds(const char* path, const char* text) noexcept
{
    int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    char buffer[4096];
    std::size_t size = 0;
    while (size < sizeof buffer) {
        ssize_t n = ::read(fd, buffer + size, sizeof buffer - size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        size += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return contains(buffer, size, text, std::strlen(text));
}

}  // namespace ck::util
