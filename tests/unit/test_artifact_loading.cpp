// Which artifact a device gets: the cubin of its architecture, a compatible
// cubin, the PTX, or an NVRTC build published into the cache; checksums
// verified before loading; errors that say what the cache holds. The driver is
// a fake, the cache and NVRTC are real.
#include "cache_admin/cache_maintenance.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "runtime/artifact_cache.hpp"

#include "runtime_package.hpp"
#include "scoped_env.hpp"

#include <doctest/doctest.h>

#include <fstream>

TEST_SUITE_BEGIN("artifact_loading");

using namespace ck;
using test::FakeCudaDriver;
using test::RuntimePackage;

namespace {

struct Fixture {
    std::optional<CudaLoadInfo> load(const std::string& name = "push", bool read_only = false)
    {
        auto options = package.options(driver);
        options.load.read_only_cache = read_only;
        auto catalog = KernelCatalog::from_package(package.package(), options);
        catalog[name].compile();
        return catalog[name].load_info();
    }

    void device(int major, int minor)
    {
        driver->devices[0].cc_major = major;
        driver->devices[0].cc_minor = minor;
    }

    RuntimePackage package;
    std::shared_ptr<FakeCudaDriver> driver = std::make_shared<FakeCudaDriver>();
};

std::filesystem::path artifact_of(const BuildReport& report, const std::string& kernel, const std::string& target)
{
    for (const auto& job : report.jobs)
        if (job.kernel == kernel && job.target == target) return job.artifacts.at(0);
    return {};
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "the cubin of the device's architecture comes first")
{
    package.build({"sm_80", "sm_90"}, true);
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "cubin");
    CHECK(info->target == "sm_90");
    CHECK_FALSE(info->published);
    CHECK(driver->images() == std::vector<std::string>{"ELF"});
}

TEST_CASE_FIXTURE(Fixture, "a device of a newer minor version takes the compatible cubin")
{
    package.build({"sm_80"}, false);
    device(8, 6);
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "compatible cubin");
    CHECK(info->target == "sm_80");
}

TEST_CASE_FIXTURE(Fixture, "a device with no cubin of its major version gets the PTX, JIT-compiled by the driver")
{
    package.build({"sm_80"}, true);  // sm_80 cubin + compute_80 PTX
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "ptx");
    CHECK(info->target == "compute_80");
    CHECK(driver->images() == std::vector<std::string>{"PTX"});
}

TEST_CASE_FIXTURE(Fixture, "on a miss NVRTC builds for the device and publishes the entry `build` would make")
{
    package.build({"sm_80", "sm_90"}, true);
    device(7, 5);  // no cubin fits, compute_90 is newer than the device
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "nvrtc");
    CHECK(info->target == "sm_75");
    CHECK(info->published);
    CHECK(std::filesystem::exists(info->artifact));
    // The runtime computed the same key as `build`: building sm_75 now is a hit.
    auto report = package.build({"sm_75"}, false);
    for (const auto& job : report.jobs) CHECK(job.state == (job.kernel == "push" ? JobState::hit : JobState::built));
    // and the next process loads the published cubin
    auto again = load();
    REQUIRE(again);
    CHECK(again->how == "cubin");
    CHECK(again->key == info->key);
}

TEST_CASE_FIXTURE(Fixture, "a read-only cache keeps the NVRTC build in memory")
{
    auto info = load("push", true);
    REQUIRE(info);
    CHECK(info->how == "nvrtc");
    CHECK_FALSE(info->published);
    CHECK(info->artifact.empty());
    CHECK_FALSE(std::filesystem::exists(package.cache() / "cuda"));
}

TEST_CASE_FIXTURE(Fixture, "a corrupt artifact is never loaded: the next candidate serves")
{
    auto report = package.build({"sm_90"}, true);
    auto cubin = artifact_of(report, "push", "sm_90");
    REQUIRE(!cubin.empty());
    std::string bytes;
    {
        std::ifstream in(cubin, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes[bytes.size() / 2] ^= 0x5a;  // same size, other content
    std::filesystem::permissions(cubin, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
    std::ofstream(cubin, std::ios::binary) << bytes;
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "ptx");
    CHECK(driver->images() == std::vector<std::string>{"PTX"});
    REQUIRE(package.warnings.size() == 1);
    CHECK(package.warnings[0].find("checksum mismatch") != std::string::npos);
    CHECK(package.warnings[0].find(cubin.string()) != std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "an entry every user can write is never loaded: the next candidate serves")
{
    auto report = package.build({"sm_90"}, true);
    auto cubin = artifact_of(report, "push", "sm_90");
    REQUIRE(!cubin.empty());
    std::filesystem::permissions(cubin.parent_path(), std::filesystem::perms::others_write,
                                 std::filesystem::perm_options::add);
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "ptx");
    REQUIRE(package.warnings.size() == 1);
    CHECK(package.warnings[0].find("chmod o-w " + cubin.parent_path().string()) != std::string::npos);
}

TEST_CASE_FIXTURE(
    Fixture,
    "an entry's folder made writable by others after a read is refused at the next; a writable root at the first")
{
    auto report = package.build({"sm_90"}, true);
    auto cubin = artifact_of(report, "push", "sm_90");
    REQUIRE(!cubin.empty());
    Config config = package.config;
    ArtifactCache cache(config, "sim", true, [](const std::string&) {});
    KernelSource source = kernel_of_file(package.package() / "push/push_cuda.cu", config).value();
    auto candidate = cache.find(source, {"sm_90", "cubin"});
    REQUIRE(candidate);
    CHECK(cache.read(*candidate).bytes.size() > 0);
    // The entry's folder, made writable by others after a first read: refused at the next.
    std::filesystem::permissions(candidate->entry, std::filesystem::perms::others_write,
                                 std::filesystem::perm_options::add);
    CHECK_THROWS_WITH_AS(cache.read(*candidate),
                         doctest::Contains(("`chmod o-w " + candidate->entry.string() + "`").c_str()), ArtifactError);
    std::filesystem::permissions(candidate->entry, std::filesystem::perms::others_write,
                                 std::filesystem::perm_options::remove);
    CHECK(cache.read(*candidate).bytes.size() > 0);
    // A cache whose root every user can write is refused at its first read.
    std::filesystem::permissions(package.cache(), std::filesystem::perms::others_write,
                                 std::filesystem::perm_options::add);
    ArtifactCache fresh(config, "sim", true, [](const std::string&) {});
    auto again = fresh.find(source, {"sm_90", "cubin"});
    REQUIRE(again);
    CHECK_THROWS_WITH_AS(fresh.read(*again),
                         doctest::Contains(("`chmod o-w " + package.cache().string() + "`").c_str()), ArtifactError);
    std::filesystem::permissions(package.cache(), std::filesystem::perms::others_write,
                                 std::filesystem::perm_options::remove);
}

namespace {

void damage_manifest(const std::filesystem::path& artifact)
{
    auto manifest = artifact.parent_path() / "manifest.json";
    std::filesystem::permissions(manifest, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
    std::ofstream(manifest, std::ios::binary) << "{ not a manifest";
}

}  // namespace

TEST_CASE_FIXTURE(Fixture,
                  "targets are looked up best first and only until one loads: a lower target's entry is never read")
{
    auto report = package.build({"sm_90"}, true);
    damage_manifest(artifact_of(report, "push", "compute_90"));
    auto info = load();
    REQUIRE(info);
    CHECK(info->target == "sm_90");
    CHECK(package.warnings.empty());  // the damaged PTX entry was not even opened
}

TEST_CASE_FIXTURE(Fixture, "an unusable entry of the best target is reported and the next target serves")
{
    auto report = package.build({"sm_90"}, true);
    damage_manifest(artifact_of(report, "push", "sm_90"));
    auto info = load();
    REQUIRE(info);
    CHECK(info->target == "compute_90");
    REQUIRE(package.warnings.size() == 1);
    CHECK(package.warnings[0].find("sm_90: unusable entry: ") != std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "when the current inputs' entries are unusable, the error never says the cache holds none")
{
    auto report = package.build({"sm_90"}, true);
    damage_manifest(artifact_of(report, "push", "sm_90"));
    damage_manifest(artifact_of(report, "push", "compute_90"));
    driver->on_load = [](const void*) { return CUDA_ERROR_NO_BINARY_FOR_GPU; };
    try {
        load();
        FAIL("the driver refuses every image");
    } catch (const ArtifactError& error) {
        std::string message = error.what();
        CHECK(message.find("sm_90: unusable entry: ") != std::string::npos);
        CHECK(message.find("compute_90: unusable entry: ") != std::string::npos);
        CHECK(message.find("no entry of the current inputs for compute_89") != std::string::npos);
        CHECK(message.find("no entry of sim.kernels.push") == std::string::npos);
    }
}

TEST_CASE_FIXTURE(Fixture, "loads and NVRTC compiles are counted in the cache's statistics, once per process")
{
    package.build({"sm_90"}, false);
    load();  // a hit
    device(7, 5);
    load();  // a miss: NVRTC
    CacheStatistics statistics = read_statistics(EntryStore(package.cache()));
    CHECK(statistics.counters.load_hits == 1);
    CHECK(statistics.counters.load_misses == 1);
    CHECK(statistics.counters.build_misses == 2);  // the package's two CUDA kernels, built above
}

TEST_CASE_FIXTURE(Fixture, "a cubin the driver refuses is skipped for the next candidate")
{
    package.build({"sm_90"}, true);
    driver->on_load = [](const void* image) {
        return std::memcmp(image,
                           "\x7f"
                           "ELF",
                           4) == 0
                   ? CUDA_ERROR_NO_BINARY_FOR_GPU
                   : CUDA_SUCCESS;
    };
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "ptx");
}

TEST_CASE_FIXTURE(Fixture,
                  "when nothing fits and NVRTC fails, the error names the device, its architecture and the cache")
{
    package.build({"sm_80"}, false);
    // An edit the cache has not seen, which does not compile.
    package.tree.write("src/sim/kernels/push/push_cuda.cu",
                       "extern \"C\" __global__ void push(double* x, const double* e, double dt, long long n)\n{\n"
                       "    x[0] = undefined_name;\n}\n");
    try {
        load();
        FAIL("nothing fits");
    } catch (const ArtifactError& error) {
        std::string message = error.what();
        CHECK(message.find("kernel 'push': nothing in the cache fits CUDA device 0, Fake H200 (sm_90)") !=
              std::string::npos);
        CHECK(message.find("the cache " + package.cache().string() + " holds:") != std::string::npos);
        CHECK(message.find("no entry of the current inputs for sm_90, compute_90, compute_89") != std::string::npos);
        CHECK(message.find("sm_80: an entry built ") != std::string::npos);
        CHECK(message.find("push_cuda.cu:3:") != std::string::npos);
        CHECK(message.find("undefined_name") != std::string::npos);
    }
}

TEST_CASE_FIXTURE(Fixture,
                  "an option that would change the target is refused before NVRTC runs: nothing loaded or published")
{
    // The cubin would be sm_80 filed as sm_90; the option screen stops it, and
    // the artifact checks (test_artifact_check) are the net behind the screen.
    package.config.options = {"-arch=sm_80"};
    CHECK_THROWS_WITH_AS(load(), doctest::Contains("-arch=sm_80 is not accepted: set targets with --arch"), UsageError);
    CHECK(driver->images().empty());
    CHECK_FALSE(std::filesystem::exists(package.cache() / "cuda"));
}

TEST_CASE_FIXTURE(Fixture, "a module whose parameter layout differs from the declaration is refused")
{
    package.build({"sm_90"}, false);
    driver->functions["push"].param_sizes = std::vector<std::size_t>{8, 8, 4, 8};
    CHECK_THROWS_WITH_AS(load(), doctest::Contains("argument 2 (double dt) takes 4 bytes in the module's entry push"),
                         ArtifactError);
    driver->functions["push"].param_sizes = std::vector<std::size_t>{8, 8, 8};
    CHECK_THROWS_WITH_AS(load(), doctest::Contains("takes 3 parameters"), ArtifactError);
}

TEST_CASE_FIXTURE(Fixture, "entries built with nvcc are found through the identity `build` recorded")
{
    package.config.compiler = CudaCompilerKind::nvcc;
    auto report = package.build({"sm_90"}, false);
    REQUIRE(report.ok());
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "cubin");
    CHECK(info->artifact == artifact_of(report, "push", "sm_90"));
}

TEST_CASE_FIXTURE(Fixture, "the runtime starts no process: no Python probe for cunumpy's headers, no nvcc")
{
    // A toolkit whose nvcc and a Python that would leave a mark if started.
    auto marker = package.tree / "a-process-was-started";
    std::string mark = "#!/bin/sh\ntouch '" + marker.string() + "'\necho 'Cuda compilation tools, release 13.0'\n";
    auto nvcc = package.tree.write("toolkit/bin/nvcc", mark);
    auto python = package.tree.write("python3", mark);
    for (const auto& script : {nvcc, python})
        std::filesystem::permissions(script, std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
    std::filesystem::create_directories(package.tree / "toolkit/lib64");
    for (const auto& entry : std::filesystem::directory_iterator("/usr/local/cuda/lib64"))
        if (entry.path().filename().string().rfind("libnvrtc", 0) == 0)
            std::filesystem::create_symlink(entry.path(), package.tree / "toolkit/lib64" / entry.path().filename());
    std::filesystem::create_symlink("/usr/local/cuda/include", package.tree / "toolkit/include");
    package.tree.write("src/sim/kernels/gather/gather_kernels.py", "def gather(x, n):\n    pass\n");
    package.tree.write(
        "src/sim/kernels/gather/gather_cuda.cu",
        "#include <cunumpy/atomic.cuh>\nextern \"C\" __global__ void gather(double* x, long long n) {}\n");
    package.config.cuda_root = package.tree / "toolkit";
    package.config.python = python.string();
    package.config.compiler = CudaCompilerKind::nvcc;

    auto options = package.options(driver);
    auto catalog = KernelCatalog::from_package(package.package(), options);
    CHECK(catalog["push"].compile());  // a miss: NVRTC in-process, never nvcc
    CHECK(catalog["push"].load_info()->how == "nvrtc");
    CHECK_THROWS_AS(catalog["gather"].compile(), ArtifactError);  // cunumpy's header not found: no probe
    CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE_FIXTURE(Fixture,
                  "the fallback root a build writes when the preferred cannot be written is where the runtime looks")
{
    // A file where the preferred root's folder would be: unwritable even for root.
    package.tree.write("blocked", "a file, not a folder");
    std::filesystem::create_directories(package.tree / "tmp");
    test::ScopedEnv cache("SIM_KERNEL_CACHE", (package.tree / "blocked/kernels").string());
    test::ScopedEnv tmp("TMPDIR", (package.tree / "tmp").string());
    package.config.cache_dir.reset();
    auto report = package.build({"sm_90"}, false);
    REQUIRE(report.ok());
    REQUIRE(artifact_of(report, "push", "sm_90").string().rfind((package.tree / "tmp/sim-kernels").string(), 0) == 0);
    auto info = load();
    REQUIRE(info);
    CHECK(info->how == "cubin");
    CHECK_FALSE(info->published);  // found, not compiled again by NVRTC
    CHECK(info->artifact == artifact_of(report, "push", "sm_90"));
}

TEST_SUITE_END();
