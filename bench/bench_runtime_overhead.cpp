// The runtime's own share of a CUDA Kernel call, without a GPU: the same call
// as bench_runtime_launch's BM_KernelCall over a driver whose launch returns
// at once, so what is timed is selection, launch arithmetic, argument checks
// and packing, limit checks and the module lookup. Runs on any machine; the
// figure is what the runtime adds on top of cuLaunchKernel itself.
#include "builder/build.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "runtime/gpu_state.hpp"
#include "runtime/selection_state.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>

namespace {

namespace fs = std::filesystem;

// A driver that accepts everything and does nothing: one device like an
// H200, one context, launches that return at once.
class NullDriver final : public ck::CudaDriver {
public:
    CUresult init() override { return CUDA_SUCCESS; }
    CUresult driver_version(int* v) override
    {
        *v = 13000;
        return CUDA_SUCCESS;
    }
    CUresult device_count(int* n) override
    {
        *n = 1;
        return CUDA_SUCCESS;
    }
    CUresult device_get(CUdevice* d, int) override
    {
        *d = 0;
        return CUDA_SUCCESS;
    }
    CUresult device_attribute(int* value, CUdevice_attribute a, CUdevice) override
    {
        *value = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR            ? 9
                 : a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR          ? 0
                 : a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK       ? 49152
                 : a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ? 232448
                 : a == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z                   ? 64
                 : a == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X                    ? 2147483647
                                                                              : 65535;
        if (a == CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK || a == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X ||
            a == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)
            *value = 1024;
        return CUDA_SUCCESS;
    }
    CUresult device_name(char* name, int length, CUdevice) override
    {
        std::strncpy(name, "null device", static_cast<std::size_t>(length));
        return CUDA_SUCCESS;
    }
    CUresult primary_context_retain(CUcontext* c, CUdevice) override
    {
        *c = reinterpret_cast<CUcontext>(&token_);
        return CUDA_SUCCESS;
    }
    CUresult primary_context_release(CUdevice) override { return CUDA_SUCCESS; }
    CUresult context_get_current(CUcontext* c) override
    {
        *c = current_;
        return CUDA_SUCCESS;
    }
    CUresult context_set_current(CUcontext c) override
    {
        current_ = c;
        return CUDA_SUCCESS;
    }
    CUresult context_get_device(CUdevice* d) override
    {
        *d = 0;
        return CUDA_SUCCESS;
    }
    CUresult context_synchronize() override { return CUDA_SUCCESS; }
    CUresult module_load_data(CUmodule* m, const void*) override
    {
        *m = reinterpret_cast<CUmodule>(&token_);
        return CUDA_SUCCESS;
    }
    CUresult module_unload(CUmodule) override { return CUDA_SUCCESS; }
    CUresult module_get_function(CUfunction* f, CUmodule, const char*) override
    {
        *f = reinterpret_cast<CUfunction>(&token_);
        return CUDA_SUCCESS;
    }
    CUresult function_attribute(int* v, CUfunction_attribute a, CUfunction) override
    {
        *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK           ? 1024
             : a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? 49152
                                                                    : 0;
        return CUDA_SUCCESS;
    }
    CUresult function_set_attribute(CUfunction, CUfunction_attribute, int) override { return CUDA_SUCCESS; }
    CUresult function_param_info(CUfunction, std::size_t, std::size_t*, std::size_t*) override
    {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    CUresult launch(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                    void** params) override
    {
        benchmark::DoNotOptimize(params);
        return CUDA_SUCCESS;
    }
    CUresult mem_alloc(CUdeviceptr* p, std::size_t) override
    {
        *p = 0x10000;
        return CUDA_SUCCESS;
    }
    CUresult mem_free(CUdeviceptr) override { return CUDA_SUCCESS; }
    CUresult memcpy_htod(CUdeviceptr, const void*, std::size_t) override { return CUDA_SUCCESS; }
    CUresult memcpy_dtoh(void*, CUdeviceptr, std::size_t) override { return CUDA_SUCCESS; }
    std::string error_text(CUresult) override { return "null driver"; }

private:
    int token_ = 0;
    CUcontext current_ = nullptr;
};

fs::path package()
{
    const char* root = std::getenv("CK_SOURCE_ROOT");
    return fs::path(root && *root ? root : CK_SOURCE_ROOT) / "share/examples/particles/src/particles/kernels";
}

struct Setup {
    Setup()
    {
        const char* tmp = std::getenv("TMPDIR");
        config = ck::load_config(package());
        config.cache_dir = fs::path(tmp && *tmp ? tmp : "/tmp") / "ck-bench-overhead-cache";
        config.architectures = {"sm_90"};
        ck::BuildRequest request{{package() / "push"}, config, false};
        request.host = false;
        ck::run_build(request);
        ck::CatalogOptions options;
        options.load.config = config;
        options.load.gpu = gpu;
        catalog.emplace(ck::KernelCatalog::from_package(package(), options));
        (*catalog)["push"].compile();
        ck::set_backend_with(ck::Backend::cuda, true, [](std::string*) { return true; });
    }
    std::shared_ptr<ck::Gpu> gpu = ck::GpuAccess::over(std::make_shared<NullDriver>());
    ck::Config config;
    std::optional<ck::KernelCatalog> catalog;
};

void BM_KernelCallNullDriver(benchmark::State& state)
{
    static Setup setup;
    ck::Kernel& push = (*setup.catalog)["push"];
    constexpr long long n = 1024;
    auto x = ck::device_array<double>(0x10000, {n}), v = ck::device_array<double>(0x20000, {n}),
         e = ck::device_array<double>(0x30000, {n});
    for (auto _ : state) push(x, v, e, 0.05, 1.0, n);
}
BENCHMARK(BM_KernelCallNullDriver)->Repetitions(5);

// The runtime's own share of a first call from a warm cache (bench_runtime_launch's
// BM_FirstCallWarmCache without the driver): opening the catalog is not timed; the
// entry's lookup, its manifest and SHA-256 check, reading the cubin and the
// load's bookkeeping are.
void BM_FirstCallNullDriver(benchmark::State& state)
{
    static Setup setup;
    ck::CatalogOptions options;
    options.load.config = setup.config;
    options.load.gpu = setup.gpu;
    options.load.read_only_cache = true;
    constexpr long long n = 1024;
    auto x = ck::device_array<double>(0x10000, {n}), v = ck::device_array<double>(0x20000, {n}),
         e = ck::device_array<double>(0x30000, {n});
    for (auto _ : state) {
        state.PauseTiming();
        std::optional<ck::KernelCatalog> catalog(ck::KernelCatalog::from_package(package(), options));
        ck::Kernel& push = (*catalog)["push"];
        state.ResumeTiming();
        push(x, v, e, 0.05, 1.0, n);
        state.PauseTiming();
        catalog.reset();
        state.ResumeTiming();
    }
}
BENCHMARK(BM_FirstCallNullDriver)->Unit(benchmark::kMicrosecond)->Repetitions(3);

}  // namespace

BENCHMARK_MAIN();
