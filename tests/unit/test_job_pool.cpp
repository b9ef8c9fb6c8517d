#include "util/job_pool.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

TEST_SUITE_BEGIN("job_pool");

using namespace ck;

TEST_CASE("every job runs once")
{
    for (int workers : {1, 2, 5}) {
        std::vector<std::atomic<int>> runs(37);
        JobPool(workers).run(runs.size(), [&](std::size_t i) { runs[i]++; });
        for (auto& r : runs) CHECK(r.load() == 1);
    }
}

TEST_CASE("no more than `workers` jobs run at once, and they do overlap")
{
    std::atomic<int> running{0}, peak{0};
    JobPool(3).run(12, [&](std::size_t) {
        int now = ++running;
        int seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {}
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        --running;
    });
    CHECK(peak.load() <= 3);
    CHECK(peak.load() >= 2);
}

TEST_CASE("zero jobs and zero workers")
{
    int runs = 0;
    JobPool(0).run(0, [&](std::size_t) { ++runs; });
    CHECK(runs == 0);
    CHECK(JobPool(0).workers() == 1);
}

TEST_SUITE_END();
