// Runtime speed on a GPU (figures in bench/RESULTS.md):
//   - a Kernel call against a raw cuLaunchKernel of the same cubin, in the
//     same process and context (target: at most 5% more);
//   - the first call of a kernel from a warm cache: keys, manifest, checksum,
//     module load and launch; context creation excluded (target: under 1 ms);
//   - opening the catalog (walk and signature reading), for reference.
// The kernel is the example package's `push` (6 parameters). Without a GPU
// the program says so and exits 77.
//
// Environment: CK_GPU_CLI_CACHE (a cache `build` filled; else one is built
// into a temporary folder), CK_SOURCE_ROOT (the repository, when the binary
// runs away from the tree it was built in).
#include "builder/build.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "util/dynamic_library.hpp"
#include "util/file_util.hpp"

#include <benchmark/benchmark.h>
#include <cudaTypedefs.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

namespace {

namespace fs = std::filesystem;

constexpr long long markers = 1024;
constexpr double dt = 0.05, length = 1.0;

fs::path source_root()
{
    const char* root = std::getenv("CK_SOURCE_ROOT");
    return root && *root ? fs::path(root) : fs::path(CK_SOURCE_ROOT);
}

fs::path package() { return source_root() / "share/examples/particles/src/particles/kernels"; }

// Everything the benchmarks share: the cache, device arrays, a catalog.
struct Setup {
    Setup()
    {
        config = ck::load_config(package());
        config.cache_dir = cache_dir();
        config.architectures = {ck::Gpu::system()->current_device().arch()};
        ck::CatalogOptions options;
        options.load.config = config;
        catalog.emplace(ck::KernelCatalog::from_package(package(), options));
        x = gpu->allocate(markers * 8);
        v = gpu->allocate(markers * 8);
        e = gpu->allocate(markers * 8);
        (*catalog)["push"].compile();
    }

    fs::path cache_dir()
    {
        if (const char* cli = std::getenv("CK_GPU_CLI_CACHE"); cli && *cli) return cli;
        const char* tmp = std::getenv("TMPDIR");
        fs::path dir = fs::path(tmp && *tmp ? tmp : "/tmp") / "ck-bench-cache";
        ck::Config c = ck::load_config(package());
        c.cache_dir = dir;
        c.architectures = {ck::Gpu::system()->current_device().arch()};
        ck::BuildRequest request;
        request.paths = {package() / "push"};
        request.config = c;
        request.host = false;
        ck::run_build(request);
        return dir;
    }

    std::shared_ptr<ck::Gpu> gpu = ck::Gpu::system();
    ck::Config config;
    std::optional<ck::KernelCatalog> catalog;
    ck::DeviceBuffer x, v, e;
};

Setup& setup()
{
    static Setup s;
    return s;
}

// The driver entry points the raw benchmark uses, resolved as any program would.
struct RawDriver {
    RawDriver()
    {
        std::string error;
        library = ck::util::DynamicLibrary::open_first({"libcuda.so.1"}, &error);
        auto get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(library.symbol("cuGetProcAddress_v2"));
        get("cuModuleLoadData", reinterpret_cast<void**>(&load), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
        get("cuModuleGetFunction", reinterpret_cast<void**>(&function), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
        get("cuLaunchKernel", reinterpret_cast<void**>(&launch), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
        get("cuCtxSynchronize", reinterpret_cast<void**>(&synchronize), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
    }
    ck::util::DynamicLibrary library;
    PFN_cuModuleLoadData_v2000 load = nullptr;
    PFN_cuModuleGetFunction_v2000 function = nullptr;
    PFN_cuLaunchKernel_v4000 launch = nullptr;
    PFN_cuCtxSynchronize_v2000 synchronize = nullptr;
};

void BM_RawLaunch(benchmark::State& state)
{
    Setup& s = setup();
    static RawDriver raw;
    auto info = (*s.catalog)["push"].load_info();
    std::string cubin = ck::util::read_file(info->artifact);
    CUmodule module = nullptr;
    CUfunction push = nullptr;
    raw.load(&module, cubin.data());
    raw.function(&push, module, "push");
    CUdeviceptr px = s.x.address(), pv = s.v.address(), pe = s.e.address();
    double step = dt, box = length;
    long long n = markers;
    void* params[] = {&px, &pv, &pe, &step, &box, &n};
    for (auto _ : state) raw.launch(push, 8, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
    raw.synchronize();
}
BENCHMARK(BM_RawLaunch)->UseRealTime()->Iterations(100000)->Repetitions(15);

void BM_KernelCall(benchmark::State& state)
{
    Setup& s = setup();
    ck::Kernel& push = (*s.catalog)["push"];
    auto x = s.x.view<double>({markers}), v = s.v.view<double>({markers}), e = s.e.view<double>({markers});
    ck::BackendGuard cuda(ck::Backend::cuda, true);
    for (auto _ : state) push(x, v, e, dt, length, markers);
    s.gpu->synchronize();
}
BENCHMARK(BM_KernelCall)->UseRealTime()->Iterations(100000)->Repetitions(15);

void BM_CatalogLookupAndCall(benchmark::State& state)
{
    Setup& s = setup();
    auto x = s.x.view<double>({markers}), v = s.v.view<double>({markers}), e = s.e.view<double>({markers});
    ck::BackendGuard cuda(ck::Backend::cuda, true);
    for (auto _ : state) (*s.catalog)["push"](x, v, e, dt, length, markers);
    s.gpu->synchronize();
}
BENCHMARK(BM_CatalogLookupAndCall)->UseRealTime()->Iterations(100000)->Repetitions(15);

void BM_OpenCatalog(benchmark::State& state)
{
    Setup& s = setup();
    ck::CatalogOptions options;
    options.load.config = s.config;
    for (auto _ : state) benchmark::DoNotOptimize(ck::KernelCatalog::from_package(package(), options));
}
BENCHMARK(BM_OpenCatalog)->UseRealTime()->Unit(benchmark::kMicrosecond)->Iterations(50)->Repetitions(3);

// The first call of a fresh catalog's kernel: keys, manifest, checksum,
// module load, launch. The context exists already (created in Setup).
void BM_FirstCallWarmCache(benchmark::State& state)
{
    Setup& s = setup();
    ck::CatalogOptions options;
    options.load.config = s.config;
    options.load.read_only_cache = true;
    auto x = s.x.view<double>({markers}), v = s.v.view<double>({markers}), e = s.e.view<double>({markers});
    ck::BackendGuard cuda(ck::Backend::cuda, true);
    double load_seconds = 0;
    for (auto _ : state) {
        state.PauseTiming();
        std::optional<ck::KernelCatalog> catalog(ck::KernelCatalog::from_package(package(), options));
        ck::Kernel& push = (*catalog)["push"];
        state.ResumeTiming();
        push(x, v, e, dt, length, markers);
        state.PauseTiming();
        load_seconds += push.load_info()->seconds;
        if (push.load_info()->how != "cubin") state.SkipWithError("the first call did not load a cached cubin");
        s.gpu->synchronize();
        catalog.reset();
        state.ResumeTiming();
    }
    state.counters["load_ms"] = benchmark::Counter(load_seconds * 1e3 / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_FirstCallWarmCache)->UseRealTime()->Unit(benchmark::kMicrosecond)->Iterations(50)->Repetitions(3);

}  // namespace

int main(int argc, char** argv)
{
    std::string why;
    if (!ck::Gpu::system()->available(&why)) {
        std::printf("SKIP: no usable GPU (%s)\n", why.c_str());
        return 77;
    }
    std::printf("GPU: %s\n", ck::Gpu::system()->current_device().name.c_str());
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
