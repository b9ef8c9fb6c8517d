#include "util/job_pool.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ck {

int job_count(std::optional<int> asked)
{
    return std::max(1, asked.value_or(static_cast<int>(std::thread::hardware_concurrency())));
}

JobPool::JobPool(int workers) : workers_(std::max(1, workers)) {}

void JobPool::run(std::size_t count, const std::function<void(std::size_t)>& job) const
{
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < count;) job(i);
    };
    std::size_t threads = std::min<std::size_t>(static_cast<std::size_t>(workers_), count);
    if (threads <= 1) return work();
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
}

}  // namespace ck
