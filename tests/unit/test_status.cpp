#include "cache/cache.hpp"
#include "status/status.hpp"
#include "temp_tree.hpp"

#include "cuda_job/cuda_planner.hpp"
#include "compilers/tool_probe.hpp"

#include <doctest/doctest.h>

#include <algorithm>

TEST_SUITE_BEGIN("status");

using namespace ck;
namespace fs = std::filesystem;

namespace {

KernelSource kernel(const std::string& name, bool cuda)
{
    KernelSource k;
    k.name = name;
    k.module = "sim.kernels." + name;
    if (cuda) k.cuda_file = "/x/" + name + "_cuda.cu";
    return k;
}

// A tree with one ported kernel and a cache whose probe record names a
// compiler that is never loaded: status plans real keys without any tool.
struct StatusTree {
    test::TempTree tree;
    Config config;

    StatusTree()
    {
        tree.write("src/sim/__init__.py", "");
        tree.write("src/sim/kernels/__init__.py", "");
        tree.write("src/sim/kernels/common.cuh", "#pragma once\n");
        tree.kernel("src/sim/kernels", "push",
                    "#include \"sim/kernels/common.cuh\"\n__global__ void push(double* x, int n) {}\n");
        tree.kernel("src/sim/kernels", "sort");
        fs::path nvrtc = tree.write("toolkit/lib64/libnvrtc.so.13", "not a library");
        config.cuda_root = tree / "toolkit";
        config.cache_dir = tree / "cache";
        config.architectures = {"sm_90"};
        config.ptx = false;
        ToolProbe(tree / "cache/.probes").answer(nvrtc, "nvrtc-identity", [] {
            return std::string("nvrtc 99.9 (fake)");
        });
    }

    StatusReport status() const { return read_status({{tree / "src"}, config}); }

    // The CUDA artifact of push; host builds (issue 4) are artifacts of their own.
    const ArtifactStatus& artifact(const StatusReport& report) const
    {
        REQUIRE(report.kernels.size() == 2);
        const auto& artifacts = report.kernels[0].artifacts;
        REQUIRE(std::count_if(artifacts.begin(), artifacts.end(), [](auto& a) { return a.kind == "cuda"; }) == 1);
        return *std::find_if(artifacts.begin(), artifacts.end(), [](auto& a) { return a.kind == "cuda"; });
    }

    // Publishes the entry a build with the fake compiler would publish.
    std::string publish() const
    {
        auto kernels = find_kernels({tree / "src/sim/kernels/push"}, config);
        CudaPlanner planner(config, "nvrtc 99.9 (fake)", [] { return std::nullopt; });
        auto jobs = planner.plan(kernels.at(0));
        REQUIRE(jobs.size() == 1);
        const std::string& key = jobs[0].key;
        EntryWriter writer(tree / "cache", "cuda", key);
        Manifest manifest;
        manifest.key = key;
        manifest.kind = "cuda";
        manifest.module = "sim.kernels.push";
        manifest.kernel = "push";
        manifest.target = "sm_90";
        manifest.inputs = jobs[0].inputs;
        manifest.artifacts.push_back(writer.add_file("push.sm_90.cubin", "sm_90", "cubin bytes"));
        writer.commit(manifest);
        EntryStore(tree / "cache").remember_latest("cuda", "sim.kernels.push", "sm_90", key);
        return key;
    }
};

}  // namespace

TEST_CASE("the porting line in cunumpy's format, with a long list shortened")
{
    CHECK(porting_summary({kernel("deposit", true), kernel("push", true), kernel("sort", false)}) ==
          "CUDA kernels: 2 of 3 (missing: sort)");
    CHECK(porting_summary({kernel("push", true)}) == "CUDA kernels: 1 of 1");
    CHECK(porting_summary({}) == "CUDA kernels: 0 of 0");
    std::vector<KernelSource> many;
    for (int i = 0; i < 12; ++i) many.push_back(kernel("k" + std::to_string(i), false));
    CHECK(porting_summary(many) == "CUDA kernels: 0 of 12 (missing: k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, ...)");
    CHECK(porting_summary(many, 2) == "CUDA kernels: 0 of 12 (missing: k0, k1, ...)");
}

TEST_CASE("artifact states: missing, built, stale with the changed input, failed last time")
{
    StatusTree t;
    StatusReport first = t.status();
    CHECK(first.summary() == "CUDA kernels: 1 of 2 (missing: sort)");
    const ArtifactStatus& missing = t.artifact(first);
    CHECK(missing.state == ArtifactState::missing);
    CHECK(missing.kind == "cuda");
    CHECK(missing.key.size() == 64);
    CHECK_FALSE(first.all_built());
    CHECK_FALSE(first.all_ported());

    CHECK(t.publish() == missing.key);  // status computes the key build computes
    StatusReport built = t.status();
    CHECK(t.artifact(built).state == ArtifactState::built);
    // Every CUDA artifact is built; the host builds' interpreter was never probed here.
    for (const auto& k : built.kernels)
        for (const auto& a : k.artifacts)
            CHECK((a.kind == "host" ? a.state == ArtifactState::unknown : a.state == ArtifactState::built));
    CHECK_FALSE(built.all_built());

    t.tree.write("src/sim/kernels/common.cuh", "#pragma once\n#define CHANGED\n");
    StatusReport stale = t.status();
    const ArtifactStatus& changed = t.artifact(stale);
    CHECK(changed.state == ArtifactState::stale);
    CHECK(changed.reason == "header sim/kernels/common.cuh changed");

    EntryStore(t.tree / "cache")
        .remember_failure("cuda", "sim.kernels.push", "sm_90", changed.key, "push_cuda.cu:2: error: x\nmore");
    StatusReport failed = t.status();
    CHECK(t.artifact(failed).state == ArtifactState::failed);
    CHECK(t.artifact(failed).reason == "failed last time: push_cuda.cu:2: error: x");

    // A failure of other inputs says nothing about these.
    t.tree.write("src/sim/kernels/common.cuh", "#pragma once\n#define CHANGED_AGAIN\n");
    CHECK(t.artifact(t.status()).state == ArtifactState::stale);
}

TEST_CASE("without a probe record the state is unknown, never guessed")
{
    StatusTree t;
    fs::remove_all(t.tree / "cache/.probes");
    StatusReport report = t.status();
    const ArtifactStatus& a = t.artifact(report);
    CHECK(a.state == ArtifactState::unknown);
    CHECK(a.key.empty());
    CHECK(a.reason.find("run `cunumpy-kernels build` once") != std::string::npos);
    auto gates = failed_gates(report, {false, true, false});
    REQUIRE(gates.size() == 1);
    // push's CUDA build, and the host builds of push and sort, whose
    // interpreter was never probed either.
    CHECK(gates[0].rfind("--require-built: 3 artifacts are not built", 0) == 0);
}

TEST_CASE("gates name what fails them")
{
    StatusTree t;
    t.tree.write("src/sim/kernels/push/push_cuda.cu", "__global__ void push(double* x, int m) {}\n");
    StatusReport report = t.status();
    CHECK_FALSE(report.signatures_agree());
    auto failures = failed_gates(report, {true, true, true});
    REQUIRE(failures.size() == 3);
    CHECK(failures[0] == "--require-cuda: 1 kernel has no CUDA version: sim.kernels.sort");
    CHECK(failures[1].find("sim.kernels.push [sm_90] missing") != std::string::npos);
    CHECK(failures[2].rfind("--check-signatures: 1 kernel takes different parameters", 0) == 0);
    CHECK(failed_gates(report, {}).empty());
    auto j = to_json(report, [](const fs::path& p) { return p.filename().string(); });
    CHECK(j["summary"] == "CUDA kernels: 1 of 2 (missing: sort)");
    CHECK(j["kernels"][0]["signatures"] == "mismatch");
    CHECK(j["kernels"][0]["artifacts"][0]["kind"] == "host");
    CHECK(j["kernels"][0]["artifacts"][0]["state"] == "unknown");
    CHECK(j["kernels"][0]["artifacts"][1]["state"] == "missing");
    CHECK(j["without_cuda"] == nlohmann::json({"sort"}));
}

TEST_SUITE_END();
