// plan_build and preview_build: the plan that `build` runs and that
// `build --dry-run` and `status` show.
#include "temp_tree.hpp"

#include "build/build_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>

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
    // Only the compiler's probe answer is recorded (for status); no entry, no tag.
    CHECK_FALSE(fs::exists(tree / "cache" / "cuda"));
    CHECK_FALSE(fs::exists(tree / "cache" / "CACHEDIR.TAG"));

    BuildReport report = preview_build(plan);
    REQUIRE(report.jobs.size() == 2);
    CHECK(report.jobs[0].target == "compute_90");
    CHECK(report.jobs[1].target == "sm_90");
    CHECK(std::all_of(report.jobs.begin(), report.jobs.end(),
                      [](const JobResult& job) { return job.state == JobState::would_build; }));
    CHECK(report.count(JobState::would_build) == 2);
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
