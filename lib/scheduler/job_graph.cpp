#include "scheduler/job_graph.hpp"

#include <algorithm>
#include <deque>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

namespace ck {

namespace {

std::vector<std::vector<std::size_t>> dependants_of(const JobDependencies& dependencies)
{
    std::vector<std::vector<std::size_t>> dependants(dependencies.size());
    for (std::size_t job = 0; job < dependencies.size(); ++job) {
        for (std::size_t dependency : dependencies[job]) {
            if (dependency >= dependencies.size())
                throw std::invalid_argument("job " + std::to_string(job) + " depends on job " +
                                            std::to_string(dependency) + ", which does not exist");
            dependants[dependency].push_back(job);
        }
    }
    return dependants;
}

// Kahn's algorithm; shorter than the job count when there is a cycle.
std::vector<std::size_t> topological_order(const JobDependencies& dependencies,
                                           const std::vector<std::vector<std::size_t>>& dependants)
{
    std::vector<std::size_t> waiting(dependencies.size());
    std::vector<std::size_t> order;
    for (std::size_t job = 0; job < dependencies.size(); ++job) {
        waiting[job] = dependencies[job].size();
        if (waiting[job] == 0) order.push_back(job);
    }
    for (std::size_t next = 0; next < order.size(); ++next)
        for (std::size_t dependant : dependants[order[next]])
            if (--waiting[dependant] == 0) order.push_back(dependant);
    return order;
}

// The number of jobs on the longest chain of dependants below each job.
std::vector<std::size_t> chain_lengths(const std::vector<std::vector<std::size_t>>& dependants,
                                       const std::vector<std::size_t>& order)
{
    std::vector<std::size_t> length(order.size(), 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        for (std::size_t dependant : dependants[*it]) length[*it] = std::max(length[*it], length[dependant] + 1);
    return length;
}

// Shared state of one run; every member is guarded by `mutex`.
class GraphRun {
public:
    GraphRun(const JobDependencies& dependencies, std::vector<std::vector<std::size_t>> dependants,
             std::vector<std::size_t> priority)
        : dependants_(std::move(dependants)), priority_(std::move(priority)), skipped_(dependencies.size(), false)
    {
        for (std::size_t job = 0; job < dependencies.size(); ++job) {
            waiting_.push_back(dependencies[job].size());
            if (waiting_[job] == 0) make_ready(job);
        }
    }

    void work(const std::function<bool(std::size_t)>& job, const std::function<void(std::size_t, std::size_t)>& skipped)
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            ready_changed_.wait(lock, [&] { return !ready_.empty() || settled_ == waiting_.size(); });
            if (ready_.empty()) return;
            std::size_t next = ready_.begin()->second;
            ready_.erase(ready_.begin());
            lock.unlock();
            bool ok = job(next);
            lock.lock();
            std::vector<std::pair<std::size_t, std::size_t>> skips;
            settle(next, ok, skips);
            lock.unlock();
            ready_changed_.notify_all();
            for (auto [dependant, failed] : skips) skipped(dependant, failed);
            lock.lock();
        }
    }

private:
    void make_ready(std::size_t job) { ready_.insert({-static_cast<long long>(priority_[job]), job}); }

    void settle(std::size_t job, bool ok, std::vector<std::pair<std::size_t, std::size_t>>& skips)
    {
        ++settled_;
        if (!ok) return skip_dependants(job, job, skips);
        for (std::size_t dependant : dependants_[job])
            if (--waiting_[dependant] == 0 && !skipped_[dependant]) make_ready(dependant);
    }

    void skip_dependants(std::size_t job, std::size_t failed, std::vector<std::pair<std::size_t, std::size_t>>& skips)
    {
        for (std::size_t dependant : dependants_[job]) {
            if (skipped_[dependant]) continue;
            skipped_[dependant] = true;
            ++settled_;
            skips.emplace_back(dependant, failed);
            skip_dependants(dependant, failed, skips);
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_changed_;
    std::vector<std::vector<std::size_t>> dependants_;
    std::vector<std::size_t> priority_;
    std::vector<std::size_t> waiting_;
    std::vector<bool> skipped_;
    std::set<std::pair<long long, std::size_t>> ready_;  // (-priority, index): first is next
    std::size_t settled_ = 0;
};

}  // namespace

JobGraph::JobGraph(int workers) : workers_(std::max(1, workers)) {}

namespace {

std::vector<std::size_t> checked_order(const JobDependencies& dependencies,
                                       const std::vector<std::vector<std::size_t>>& dependants)
{
    auto order = topological_order(dependencies, dependants);
    if (order.size() != dependencies.size()) {
        std::string cycle;
        for (std::size_t index : find_cycle(dependencies))
            cycle += (cycle.empty() ? "" : " -> ") + std::to_string(index);
        throw std::invalid_argument("the job dependencies form a cycle: " + cycle);
    }
    return order;
}

}  // namespace

void JobGraph::run(const JobDependencies& dependencies, const std::function<bool(std::size_t)>& job,
                   const std::function<void(std::size_t, std::size_t)>& skipped) const
{
    auto dependants = dependants_of(dependencies);
    auto order = checked_order(dependencies, dependants);
    if (dependencies.empty()) return;
    auto priority = chain_lengths(dependants, order);
    GraphRun state(dependencies, std::move(dependants), std::move(priority));
    std::size_t threads = std::min<std::size_t>(static_cast<std::size_t>(workers_), dependencies.size());
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back([&] { state.work(job, skipped); });
    state.work(job, skipped);
}

double longest_path(const JobDependencies& dependencies, const std::vector<double>& seconds)
{
    if (seconds.size() != dependencies.size())
        throw std::invalid_argument("longest_path: " + std::to_string(seconds.size()) + " job times for " +
                                    std::to_string(dependencies.size()) + " jobs");
    auto order = checked_order(dependencies, dependants_of(dependencies));
    // In dependency order, a job's chain ends no earlier than its longest dependency's.
    std::vector<double> finish(dependencies.size(), 0);
    double longest = 0;
    for (std::size_t job : order) {
        for (std::size_t dependency : dependencies[job]) finish[job] = std::max(finish[job], finish[dependency]);
        finish[job] += seconds[job];
        longest = std::max(longest, finish[job]);
    }
    return longest;
}

namespace {

// Depth-first from `start` with an explicit stack of (job, next dependency to
// follow); `mark` carries over between starts, so each job is walked once.
enum class Mark { unseen, open, done };

std::vector<std::size_t> cycle_below(const JobDependencies& dependencies, std::size_t start, std::vector<Mark>& mark)
{
    std::vector<std::pair<std::size_t, std::size_t>> stack = {{start, 0}};
    std::vector<std::size_t> path = {start};
    mark[start] = Mark::open;
    while (!stack.empty()) {
        auto& [job, next] = stack.back();
        if (next == dependencies[job].size()) {
            mark[job] = Mark::done;
            stack.pop_back();
            path.pop_back();
            continue;
        }
        std::size_t dependency = dependencies[job][next++];
        if (dependency >= dependencies.size() || mark[dependency] == Mark::done) continue;
        if (mark[dependency] == Mark::open) {
            std::vector<std::size_t> cycle(std::find(path.begin(), path.end(), dependency), path.end());
            cycle.push_back(dependency);
            return cycle;
        }
        mark[dependency] = Mark::open;
        path.push_back(dependency);
        stack.emplace_back(dependency, 0);
    }
    return {};
}

}  // namespace

std::vector<std::size_t> find_cycle(const JobDependencies& dependencies)
{
    std::vector<Mark> mark(dependencies.size(), Mark::unseen);
    for (std::size_t start = 0; start < dependencies.size(); ++start) {
        if (mark[start] != Mark::unseen) continue;
        if (auto cycle = cycle_below(dependencies, start, mark); !cycle.empty()) return cycle;
    }
    return {};
}

std::vector<std::size_t> find_cycle_from(const JobDependencies& dependencies, std::size_t start)
{
    if (start >= dependencies.size()) return {};
    std::vector<Mark> mark(dependencies.size(), Mark::unseen);
    return cycle_below(dependencies, start, mark);
}

std::vector<std::size_t> find_cycle_through(const JobDependencies& dependencies, std::size_t job)
{
    if (job >= dependencies.size()) return {};
    // Breadth-first from the job's dependencies, back to the job.
    constexpr std::size_t unseen = static_cast<std::size_t>(-1);
    std::vector<std::size_t> came_from(dependencies.size(), unseen);
    std::deque<std::size_t> queue = {job};
    while (!queue.empty()) {
        std::size_t at = queue.front();
        queue.pop_front();
        for (std::size_t next : dependencies[at]) {
            if (next >= dependencies.size() || came_from[next] != unseen) continue;
            came_from[next] = at;
            if (next == job) {
                std::vector<std::size_t> cycle = {job};
                for (std::size_t step = at; step != job; step = came_from[step]) cycle.push_back(step);
                cycle.push_back(job);
                std::reverse(cycle.begin() + 1, cycle.end() - 1);
                return cycle;
            }
            queue.push_back(next);
        }
    }
    return {};
}

}  // namespace ck
