// The parts of build planning, each on its own over temporary trees, as
// ninja tests its Plan: cache roots, CUDA kernels, host modules and in-place
// modules. Each reads and decides; none writes.
#include "temp_tree.hpp"

#include "builder/plan_cache_roots.hpp"
#include "builder/plan_cuda.hpp"
#include "builder/plan_host.hpp"
#include "builder/plan_in_place.hpp"
#include "package/kernel_walker.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

TEST_SUITE_BEGIN("plan_parts");

using namespace ck;
namespace fs = std::filesystem;

namespace {

// A plan over `tree`/src with its kernels walked, as BuildPlanner::plan starts.
BuildPlan walked_plan(const test::TempTree& tree, bool dry_run, bool start_tools = true)
{
    BuildPlan plan;
    plan.request.paths = {tree / "src"};
    plan.request.config.cache_dir = tree / "cache";
    plan.request.config.architectures = {"sm_90"};
    plan.request.config.ptx = false;
    plan.request.dry_run = dry_run;
    plan.request.start_tools = start_tools;
    if (const char* python = std::getenv("CK_TEST_PYTHON")) plan.request.config.python = python;
    plan.kernels = find_kernels(plan.request.paths, plan.request.config);
    return plan;
}

void write_package(const test::TempTree& tree)
{
    tree.write("src/sim/__init__.py", "");
    tree.write("src/sim/kernels/__init__.py", "");
    tree.kernel("src/sim/kernels", "push", "extern \"C\" __global__ void push(double* x, int n) {}\n");
    tree.kernel("src/sim/kernels", "sort");
}

std::vector<std::string> kernels_of(const std::vector<JobResult>& jobs)
{
    std::vector<std::string> names;
    for (const auto& job : jobs) names.push_back(job.kernel);
    return names;
}

}  // namespace

TEST_CASE("cache roots: each set up once, nothing created; a build's writes to it are queued, a dry run's too")
{
    test::TempTree tree;
    write_package(tree);
    BuildPlan plan = walked_plan(tree, false);
    CacheRoots roots(plan);
    CacheContext& first = roots.context_for(plan.kernels.front());
    CHECK(&roots.context_named("sim") == &first);
    CHECK(plan.contexts.size() == 1);
    CHECK_FALSE(fs::exists(tree / "cache"));
    REQUIRE(plan.writes.roots.size() == 1);  // created, tagged and swept when the build applies its writes
    CHECK(plan.writes.roots.front() == &first);
    roots.count_hit(first, "cuda", "sim.kernels.push", "sm_90", std::string(64, 'a'));
    CHECK(first.hits == 1);
    REQUIRE(plan.writes.hits.size() == 1);
    CHECK(plan.writes.hits.front().target == "sm_90");

    plan.warnings = {"a", "b", "c"};
    CHECK(roots.take_warnings_since(1) == std::vector<std::string>{"b", "c"});
    CHECK(plan.warnings == std::vector<std::string>{"a"});
}

TEST_CASE("cache roots: a root others may write is refused by a build and a warning in a dry run")
{
    test::TempTree tree;
    write_package(tree);
    fs::create_directories(tree / "cache");
    REQUIRE(::chmod((tree / "cache").c_str(), 0777) == 0);
    BuildPlan build = walked_plan(tree, false);
    CacheRoots build_roots(build);
    CHECK_THROWS_AS(build_roots.context_named("sim"), CacheError);
    BuildPlan dry = walked_plan(tree, true);
    CacheRoots dry_roots(dry);
    dry_roots.context_named("sim");
    REQUIRE(dry.warnings.size() == 1);
    CHECK(dry.warnings.front().find((tree / "cache").string()) != std::string::npos);
}

TEST_CASE("cache roots: a hit whose entry others may write is decided failed, never counted")
{
    test::TempTree tree;
    write_package(tree);
    BuildPlan plan = walked_plan(tree, true);
    CacheRoots roots(plan);
    CacheContext& context = roots.context_named("sim");
    fs::path entry = tree / "cache/cuda/aa" / std::string(64, 'a');
    tree.write("cache/cuda/aa/" + std::string(64, 'a') + "/manifest.json", "{}");
    tree.write("cache/cuda/aa/" + std::string(64, 'a') + "/push.sm_90.cubin", "x");
    REQUIRE(::chmod((entry / "push.sm_90.cubin").c_str(), 0666) == 0);
    JobResult hit;
    hit.kernel = "push";
    hit.state = JobState::hit;
    hit.entry = entry;
    CHECK(roots.refuse_writable_entry(context, hit, {"push.sm_90.cubin"}));
    REQUIRE(plan.decided.size() == 1);
    CHECK(plan.decided.front().state == JobState::failed);
    CHECK(plan.decided.front().log.find("push.sm_90.cubin") != std::string::npos);
    CHECK(context.hits == 0);
    REQUIRE(::chmod((entry / "push.sm_90.cubin").c_str(), 0644) == 0);
    CHECK_FALSE(roots.refuse_writable_entry(context, hit, {"push.sm_90.cubin"}));
}

TEST_CASE(
    "CUDA kernels: read apart, then added: a kernel with a missing header fails, the others miss; nothing written")
{
    test::TempTree tree;
    write_package(tree);
    tree.kernel("src/sim/kernels", "deposit",
                "#include \"absent.cuh\"\nextern \"C\" __global__ void deposit(double* x) {}\n");
    BuildPlan plan = walked_plan(tree, true);
    CacheRoots roots(plan);
    CudaKernelsPlanner cuda(plan, roots);
    auto readings = cuda.readings();
    REQUIRE(readings.size() == 2);    // sort has no CUDA file
    CHECK(plan.cuda_misses.empty());  // reading adds nothing to the plan
    for (auto& reading : readings) reading.run();
    cuda.add(readings);
    REQUIRE(plan.decided.size() == 1);
    CHECK(plan.decided.front().kernel == "deposit");
    CHECK(plan.decided.front().state == JobState::failed);
    CHECK(plan.decided.front().log.find("absent.cuh") != std::string::npos);
    REQUIRE(plan.cuda_misses.size() == 1);
    CHECK(plan.cuda_misses.front().job.kernel->name == "push");
    CHECK(plan.cuda_misses.front().reason == "no entry");
    CHECK(plan.cuda_misses.front().job.key.size() == 64);
    CHECK_FALSE(fs::exists(tree / "cache"));
}

TEST_CASE("CUDA kernels: without tools and no record of the compiler, every target misses with an unknown key and why")
{
    test::TempTree tree;
    write_package(tree);
    BuildPlan plan = walked_plan(tree, true, false);
    CacheRoots roots(plan);
    CudaKernelsPlanner cuda(plan, roots);
    auto readings = cuda.readings();
    for (auto& reading : readings) reading.run();
    cuda.add(readings);
    REQUIRE(plan.cuda_misses.size() == 1);
    CHECK(plan.cuda_misses.front().job.key.empty());
    CHECK(plan.cuda_misses.front().reason.find("run `cunumpy-kernels build` once") != std::string::npos);
    CHECK_FALSE(fs::exists(tree / "cache"));
}

TEST_CASE("host modules: where host builds cannot run, status lists each kernel with why and a build throws")
{
    test::TempTree tree;
    write_package(tree);
    BuildPlan status = walked_plan(tree, true, false);  // no record of the Python interpreter's facts
    CacheRoots status_roots(status);
    HostModulesPlanner status_host(status, status_roots);
    auto readings = status_host.readings();
    REQUIRE(readings.size() == 1);  // one cache root
    status_host.add(readings);
    CHECK(kernels_of(status.decided) == std::vector<std::string>{"push", "sort"});
    for (const auto& job : status.decided) {
        CHECK(job.state == JobState::would_build);
        CHECK_FALSE(job.reason.empty());
    }
    BuildPlan build = walked_plan(tree, false);
    build.request.config.python = (tree / "no-such-python").string();
    CacheRoots build_roots(build);
    HostModulesPlanner build_host(build, build_roots);
    auto build_readings = build_host.readings();  // the setup's problem is kept, not thrown, beside the CUDA side
    CHECK_THROWS_AS(build_host.add(build_readings), ToolchainError);
    CHECK_FALSE(fs::exists(tree / "cache"));
}

TEST_CASE("host modules: with Python and Pyccel, each module is a miss of its own key; nothing written")
{
    REQUIRE(std::getenv("CK_TEST_PYTHON"));  // set by tests/meson.build: the project's .venv with Pyccel
    test::TempTree tree;
    write_package(tree);
    BuildPlan plan = walked_plan(tree, true);
    CacheRoots roots(plan);
    HostModulesPlanner host(plan, roots);
    auto readings = host.readings();
    CHECK(plan.host_misses.empty());
    host.add(readings);
    REQUIRE(plan.host_misses.size() == 2);
    for (const auto& miss : plan.host_misses) {
        CHECK(miss.reason == "no entry");
        CHECK(miss.context->host.plan.jobs[miss.module].key.size() == 64);
    }
    CHECK_FALSE(fs::exists(tree / "cache"));
}

TEST_CASE("in-place modules: one plan over the tree with *<suffix>.py modules; another tool's newer build is kept")
{
    REQUIRE(std::getenv("CK_TEST_PYTHON"));
    test::TempTree tree;
    write_package(tree);
    tree.write("src/sim/helpers_kernels.py", "def twice(x: float) -> float:\n    return 2 * x\n");
    auto plan_in_place = [&](BuildPlan& plan) {
        plan.request.config.in_place = true;
        CacheRoots roots(plan);
        HostModulesPlanner host(plan, roots);
        InPlacePlanner(plan, roots, host).plan();
    };
    BuildPlan cold = walked_plan(tree, true);
    plan_in_place(cold);
    std::vector<std::string> modules;
    for (const auto& miss : cold.host_misses) {
        CHECK(miss.reason == "no entry");
        modules.push_back(miss.context->host.plan.modules[miss.module].name);
    }
    std::sort(modules.begin(), modules.end());
    CHECK(modules == std::vector<std::string>{"sim.helpers_kernels", "sim.kernels.push.push_kernels",
                                              "sim.kernels.sort.sort_kernels"});
    CHECK_FALSE(fs::exists(tree / "cache"));

    // Another tool's build of push, newer than its source: kept, and said once.
    const std::string& ext_suffix = cold.host_misses.front().context->host.setup.tools.ext_suffix;
    REQUIRE_FALSE(ext_suffix.empty());
    fs::path foreign = tree / ("src/sim/kernels/push/push_kernels" + ext_suffix);
    tree.write("src/sim/kernels/push/push_kernels" + ext_suffix, "a build of another tool");
    fs::last_write_time(foreign, fs::file_time_type::clock::now() + std::chrono::hours(1));
    BuildPlan warm = walked_plan(tree, true);
    plan_in_place(warm);
    CHECK(warm.host_misses.size() == 2);
    REQUIRE(warm.decided.size() == 1);
    CHECK(warm.decided.front().state == JobState::hit);
    CHECK(warm.decided.front().foreign.find("built by another tool") != std::string::npos);
    REQUIRE(warm.warnings.size() == 1);
    CHECK(warm.warnings.front().find("1 in-place build of another tool kept") != std::string::npos);
}
