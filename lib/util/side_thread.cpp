#include "util/side_thread.hpp"

#include <system_error>
#include <thread>

namespace ck::util {

void run_beside(const std::function<void()>& side, const std::function<void()>& main)
{
    std::jthread beside;
    try {
        beside = std::jthread(side);
    } catch (const std::system_error&) {
        // No thread: the side's work waits for this thread (below).
    }
    try {
        main();
    } catch (...) {
        if (beside.joinable())
            beside.join();
        else
            side();
        throw;
    }
    if (beside.joinable())
        beside.join();
    else
        side();
}

}  // namespace ck::util
