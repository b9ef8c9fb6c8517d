#include "scheduler/job_graph.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

TEST_SUITE_BEGIN("job_graph");

using namespace ck;

namespace {

// Records the order in which jobs start and end.
struct Trace {
    std::mutex mutex;
    std::vector<std::size_t> started;
    std::vector<std::size_t> ended;
    std::vector<std::pair<std::size_t, std::size_t>> skipped;

    std::size_t position(const std::vector<std::size_t>& list, std::size_t job)
    {
        return static_cast<std::size_t>(std::find(list.begin(), list.end(), job) - list.begin());
    }
};

void run_traced(int workers, const JobDependencies& dependencies, Trace& trace,
                const std::vector<std::size_t>& failing = {})
{
    JobGraph(workers).run(
        dependencies,
        [&](std::size_t job) {
            {
                std::lock_guard lock(trace.mutex);
                trace.started.push_back(job);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            std::lock_guard lock(trace.mutex);
            trace.ended.push_back(job);
            return std::find(failing.begin(), failing.end(), job) == failing.end();
        },
        [&](std::size_t job, std::size_t failed) {
            std::lock_guard lock(trace.mutex);
            trace.skipped.emplace_back(job, failed);
        });
}

}  // namespace

TEST_CASE("a job starts only after every job it depends on has ended")
{
    // 0 <- 1 <- 3, 0 <- 2 <- 3, 4 alone, 5 <- 4 and 3
    JobDependencies dependencies = {{}, {0}, {0}, {1, 2}, {}, {4, 3}};
    for (int workers : {1, 2, 4}) {
        Trace trace;
        run_traced(workers, dependencies, trace);
        REQUIRE(trace.ended.size() == dependencies.size());
        for (std::size_t job = 0; job < dependencies.size(); ++job)
            for (std::size_t dependency : dependencies[job])
                CHECK(trace.position(trace.ended, dependency) < trace.position(trace.started, job));
        CHECK(trace.skipped.empty());
    }
}

TEST_CASE("jobs without dependencies run side by side, at most `workers` at once")
{
    std::atomic<int> running{0}, peak{0};
    JobDependencies dependencies(10);
    JobGraph(3).run(
        dependencies,
        [&](std::size_t) {
            int now = ++running;
            int seen = peak.load();
            while (now > seen && !peak.compare_exchange_weak(seen, now)) {}
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            --running;
            return true;
        },
        [](std::size_t, std::size_t) {});
    CHECK(peak.load() <= 3);
    CHECK(peak.load() >= 2);
}

TEST_CASE("a failed job skips its dependants, directly and through others, and nothing else")
{
    // 0 <- 1 <- 2; 3 <- 2; 4 alone
    JobDependencies dependencies = {{}, {0}, {1, 3}, {}, {}};
    Trace trace;
    run_traced(2, dependencies, trace, {0});
    std::sort(trace.ended.begin(), trace.ended.end());
    CHECK(trace.ended == std::vector<std::size_t>{0, 3, 4});
    std::sort(trace.skipped.begin(), trace.skipped.end());
    CHECK(trace.skipped == std::vector<std::pair<std::size_t, std::size_t>>{{1, 0}, {2, 0}});
}

TEST_CASE("the head of the longest chain starts first")
{
    // 3 heads a chain of two dependants (4 <- 5), 4 one; 0, 1, 2 and 5 none (ties: lower index).
    JobDependencies dependencies = {{}, {}, {}, {}, {3}, {4}};
    Trace trace;
    run_traced(1, dependencies, trace);
    CHECK(trace.started == std::vector<std::size_t>{3, 4, 0, 1, 2, 5});
}

TEST_CASE("cycles and unknown jobs are refused before anything runs")
{
    int runs = 0;
    auto count = [&](std::size_t) {
        ++runs;
        return true;
    };
    auto ignore = [](std::size_t, std::size_t) {};
    CHECK_THROWS_AS(JobGraph(2).run({{}, {2}, {3}, {1}}, count, ignore), std::invalid_argument);
    CHECK_THROWS_AS(JobGraph(2).run({{}, {7}}, count, ignore), std::invalid_argument);
    CHECK_THROWS_AS(JobGraph(2).run({{0}}, count, ignore), std::invalid_argument);
    CHECK(runs == 0);
    CHECK(find_cycle({{}, {2}, {3}, {1}}) == std::vector<std::size_t>{1, 2, 3, 1});
    CHECK(find_cycle({{}, {0}, {0, 1}}).empty());
}

TEST_CASE("find_cycle_from names the cycle a job is in or depends on, not another one")
{
    // Two cycles of the same shape, 1 <-> 2 and 4 <-> 5; job 3 depends on the second, job 0 on none.
    JobDependencies dependencies = {{}, {2}, {1}, {0, 4}, {5}, {4}};
    CHECK(find_cycle_from(dependencies, 1) == std::vector<std::size_t>{1, 2, 1});
    CHECK(find_cycle_from(dependencies, 5) == std::vector<std::size_t>{5, 4, 5});
    CHECK(find_cycle_from(dependencies, 3) == std::vector<std::size_t>{4, 5, 4});
    CHECK(find_cycle_from(dependencies, 0).empty());
    CHECK(find_cycle_from(dependencies, 9).empty());
}

TEST_CASE("find_cycle_through names a shortest cycle through the job, and none for a job only behind one")
{
    // 0 -> 1 -> 2 -> 0 and 0 -> 3 -> 0; 4 depends on 0; 5 on itself.
    JobDependencies dependencies = {{1, 3}, {2}, {0}, {0}, {0}, {5}};
    CHECK(find_cycle_through(dependencies, 0) == std::vector<std::size_t>{0, 3, 0});
    CHECK(find_cycle_through(dependencies, 1) == std::vector<std::size_t>{1, 2, 0, 1});
    CHECK(find_cycle_through(dependencies, 4).empty());
    CHECK(find_cycle_through(dependencies, 5) == std::vector<std::size_t>{5, 5});
    CHECK(find_cycle_through(dependencies, 6).empty());
}

TEST_CASE("the longest path sums job times along the heaviest chain of dependencies")
{
    // 0 (1 s) <- 2 (4 s) <- 3 (1 s); 1 (5 s) <- 3: the chain 0, 2, 3 is 6 s, 1, 3 only 6 s too; 4 alone 6.5 s.
    JobDependencies dependencies = {{}, {}, {0}, {1, 2}, {}};
    CHECK(longest_path(dependencies, {1, 5, 4, 1, 6.5}) == doctest::Approx(6.5));
    CHECK(longest_path(dependencies, {1, 5, 4.5, 1, 2}) == doctest::Approx(6.5));
    CHECK(longest_path(dependencies, {2, 1, 4, 1, 2}) == doctest::Approx(7));
    CHECK(longest_path({}, {}) == 0);
    CHECK_THROWS_AS(longest_path(dependencies, {1, 2}), std::invalid_argument);
    CHECK_THROWS_AS(longest_path({{1}, {0}}, {1, 1}), std::invalid_argument);
}

TEST_CASE("an empty graph runs nothing")
{
    int runs = 0;
    JobGraph(0).run(
        {},
        [&](std::size_t) {
            ++runs;
            return true;
        },
        [](std::size_t, std::size_t) {});
    CHECK(runs == 0);
    CHECK(JobGraph(0).workers() == 1);
}

TEST_SUITE_END();
