// plan_build and preview_build: the plan that `build` runs and that
// `build --dry-run` and `status` show.
#include "temp_tree.hpp"

#include "builder/build_plan.hpp"
#include "util/temporary_name.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

TEST_SUITE_BEGIN("build_plan");

using namespace ck;
namespace fs = std::filesystem;

namespace {

BuildRequest cuda_dry_run(const test::TempTree& tree)
{
    BuildRequest request;
    request.paths = {tree / "src"};
    request.config.cache_dir = tree / "cache";
    request.config.architectures = {"sm_90"};
    request.config.ptx = true;
    request.dry_run = true;
    request.host = false;
    return request;
}

}  // namespace

TEST_CASE("a cold cache plans every target of a ported kernel as a miss, and a dry run publishes nothing")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.kernel("src/sim", "push", "extern \"C\" __global__ void push(double* x, int n) {}\n");
    tree.kernel("src/sim", "sort");
    BuildPlan plan = plan_build(cuda_dry_run(tree));
    CHECK(plan.kernels.size() == 2);
    CHECK(plan.decided.empty());
    REQUIRE(plan.cuda_misses.size() == 2);
    for (const auto& miss : plan.cuda_misses) {
        CHECK(miss.reason == "no entry");
        CHECK(miss.job.key.size() == 64);
    }
    // Planning writes nothing: not the root, not the compiler's probe answer.
    CHECK_FALSE(fs::exists(tree / "cache"));

    BuildReport report = preview_build(plan);
    REQUIRE(report.jobs.size() == 2);
    CHECK(report.jobs[0].target == "compute_90");
    CHECK(report.jobs[1].target == "sm_90");
    CHECK(std::all_of(report.jobs.begin(), report.jobs.end(),
                      [](const JobResult& job) { return job.state == JobState::would_build; }));
    CHECK(report.count(JobState::would_build) == 2);
}

TEST_CASE("planning a build writes nothing; apply_planned_writes makes the root, tags it and keeps the tools' answers")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.kernel("src/sim", "push", "extern \"C\" __global__ void push(double* x, int n) {}\n");
    BuildRequest request = cuda_dry_run(tree);
    request.dry_run = false;
    BuildPlan plan = plan_build(request);
    CHECK_FALSE(fs::exists(tree / "cache"));
    REQUIRE(plan.writes.roots.size() == 1);
    CHECK(plan.cuda_misses.size() == 2);

    apply_planned_writes(plan);
    CHECK(fs::exists(tree / "cache" / "CACHEDIR.TAG"));
    CHECK_FALSE(fs::is_empty(tree / "cache" / ".probes"));
    CHECK(plan.writes.roots.empty());
}

TEST_CASE("a stale temporary is swept by the build's writes, never by planning")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.kernel("src/sim", "push", "extern \"C\" __global__ void push(double* x, int n) {}\n");
    BuildRequest request = cuda_dry_run(tree);
    request.dry_run = false;
    BuildPlan first = plan_build(request);
    apply_planned_writes(first);
    // A folder a killed build left in the cache's temporary folder two days ago.
    fs::path stale = tree / "cache" / temporary_folder_name / "entry.1234.abcd.tmp";
    fs::create_directories(stale);
    fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(48));
    for (bool dry_run : {true, false}) {
        request.dry_run = dry_run;
        BuildPlan plan = plan_build(request);
        CHECK(fs::exists(stale));
        CHECK(plan.writes.roots.size() == 1);  // a dry run drops what it planned
        if (!dry_run) apply_planned_writes(plan);
    }
    CHECK_FALSE(fs::exists(stale));
}

TEST_CASE("a dry run of run_build is the preview of the plan")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.kernel("src/sim", "push", "extern \"C\" __global__ void push(double* x, int n) {}\n");
    BuildRequest request = cuda_dry_run(tree);
    BuildReport run = run_build(request);
    BuildReport preview = preview_build(plan_build(request));
    REQUIRE(run.jobs.size() == preview.jobs.size());
    for (std::size_t i = 0; i < run.jobs.size(); ++i) {
        CHECK(run.jobs[i].key == preview.jobs[i].key);
        CHECK(run.jobs[i].state == preview.jobs[i].state);
        CHECK(run.jobs[i].reason == preview.jobs[i].reason);
    }
}

TEST_CASE("a kernel whose source cannot be read is decided failed at planning, the others planned")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    tree.kernel("src/sim", "push", "#include \"absent.cuh\"\nextern \"C\" __global__ void push(double* x, int n) {}\n");
    tree.kernel("src/sim", "deposit", "extern \"C\" __global__ void deposit(double* x, int n) {}\n");
    BuildPlan plan = plan_build(cuda_dry_run(tree));
    REQUIRE(plan.decided.size() == 2);
    for (const auto& job : plan.decided) {
        CHECK(job.kernel == "push");
        CHECK(job.state == JobState::failed);
        CHECK(job.log.find("absent.cuh") != std::string::npos);
    }
    REQUIRE(plan.cuda_misses.size() == 2);
    CHECK(plan.cuda_misses[0].job.kernel->name == "deposit");
}

TEST_CASE("the CUDA and host sides, read side by side, add to the plan in the order of one thread, every time")
{
    test::TempTree tree;
    tree.write("src/sim/__init__.py", "");
    for (int i = 0; i < 12; ++i) {
        std::string name = "k" + std::to_string(i);
        // Every third kernel cannot be read, every other one has a computed include no scan can resolve.
        std::string include = i % 3 == 0 ? "#include \"absent.cuh\"\n" : i % 2 ? "#include NOWHERE\n" : "";
        tree.kernel("src/sim", name, include + "extern \"C\" __global__ void " + name + "(double* x, int n) {}\n");
    }
    tree.write("src/sim/h.cuh", "\n");
    BuildRequest request = cuda_dry_run(tree);
    request.dry_run = false;
    BuildPlan build = plan_build(request);
    apply_planned_writes(build);  // as a build: keeps the compiler's identity, which a plan that starts no tool needs
    request.dry_run = true;
    request.host = true;
    request.start_tools = false;  // as status: the host toolchain was never probed, so each host job is unplanned

    BuildPlan first = plan_build(request);
    REQUIRE(first.decided.size() == 8 * 2 + 12);
    for (std::size_t i = 0; i < first.decided.size(); ++i) {
        CAPTURE(i);
        CHECK((first.decided[i].kind == "host") == (i >= 16));  // the CUDA side's failures first
    }
    REQUIRE(first.cuda_misses.size() == 4 * 2);
    std::vector<std::string> computed;
    for (const auto& job : first.decided)
        if (job.log.find("#include NOWHERE") != std::string::npos &&
            (computed.empty() || computed.back() != job.module))
            computed.push_back(job.module);
    CHECK(computed == std::vector<std::string>{"sim.k1", "sim.k11", "sim.k5", "sim.k7"});

    for (int run = 0; run < 5; ++run) {
        BuildPlan again = plan_build(request);
        CHECK(again.warnings == first.warnings);
        REQUIRE(again.decided.size() == first.decided.size());
        for (std::size_t i = 0; i < again.decided.size(); ++i) {
            CHECK(again.decided[i].module == first.decided[i].module);
            CHECK(again.decided[i].log == first.decided[i].log);
        }
        REQUIRE(again.cuda_misses.size() == first.cuda_misses.size());
        for (std::size_t i = 0; i < again.cuda_misses.size(); ++i)
            CHECK(again.cuda_misses[i].job.key == first.cuda_misses[i].job.key);
    }
}

TEST_SUITE_END();
