#include "util/temporary_name.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <random>

namespace ck {

std::string host_name()
{
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

namespace {

// The first line of a /proc file, or "" where there is none (no /proc).
std::string first_line_of(const char* path)
{
    std::ifstream file(path);
    std::string line;
    std::getline(file, line);
    return line;
}

}  // namespace

std::string process_scope()
{
    static const std::string scope = [] {
        std::string boot = first_line_of("/proc/sys/kernel/random/boot_id").substr(0, 8);
        char link[64] = {};
        ssize_t length = ::readlink("/proc/self/ns/pid", link, sizeof link - 1);
        std::string namespace_id;  // "pid:[4026531836]" -> 4026531836
        for (ssize_t i = 0; i < length; ++i)
            if (link[i] >= '0' && link[i] <= '9') namespace_id += link[i];
        return host_name() + "~" + boot + "~" + namespace_id;
    }();
    return scope;
}

std::string unique_temporary_name()
{
    static std::atomic<unsigned long> counter{0};
    std::random_device random;
    return process_scope() + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
           std::to_string(random());
}

std::optional<TemporaryOwner> owner_of_temporary(const std::string& name)
{
    // Host names may hold dots: the pid is the third field from the end.
    auto last = name.rfind('.');
    if (last == std::string::npos || last == 0) return std::nullopt;
    auto counter = name.rfind('.', last - 1);
    if (counter == std::string::npos || counter == 0) return std::nullopt;
    auto pid = name.rfind('.', counter - 1);
    if (pid == std::string::npos) return std::nullopt;
    try {
        return TemporaryOwner{name.substr(0, pid), std::stol(name.substr(pid + 1, counter - pid - 1))};
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

bool is_stale_temporary(const std::filesystem::path& folder, const std::string& name, double max_age_seconds)
{
    auto owner = owner_of_temporary(name);
    if (owner && owner->host == process_scope() && ::kill(static_cast<pid_t>(owner->pid), 0) != 0 && errno == ESRCH)
        return true;
    std::error_code error;
    auto written = std::filesystem::last_write_time(folder, error);
    if (error) return false;
    auto age = std::filesystem::file_time_type::clock::now() - written;
    return std::chrono::duration<double>(age).count() >= max_age_seconds;
}

}  // namespace ck
