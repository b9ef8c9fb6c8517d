// A Kernel call against a raw cuLaunchKernel of the same cubin, timed in
// pairs (issue 14): rounds of N launches of each in one process, the order
// alternating each round, so that drift (GPU clocks ramping up, host noise)
// hits both alike; Google Benchmark's repetitions were too far apart for a
// 5 % question. Prints the per-launch medians and the median of the per-round
// ratio (target: at most 1.05).
//
//   launch-pairs [ROUNDS=300] [N=1000] [LABEL]
//
// Needs a GPU (exit 77 without one), CK_GPU_CLI_CACHE (a cache `build` filled
// with the example package) and CK_SOURCE_ROOT (the repository or the folder
// tests/gpu/pack.sh made).
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "util/dynamic_library.hpp"
#include "util/file_util.hpp"

#include <cudaTypedefs.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr long long markers = 1024;
constexpr double dt = 0.05, length = 1.0;

// The driver entry points the raw side calls, as an application would get them.
struct RawDriver {
    PFN_cuModuleLoadData_v2000 load = nullptr;
    PFN_cuModuleGetFunction_v2000 function = nullptr;
    PFN_cuLaunchKernel_v4000 launch = nullptr;
    PFN_cuCtxSynchronize_v2000 synchronize = nullptr;
};

RawDriver raw_driver(const ck::util::DynamicLibrary& library)
{
    auto get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(library.symbol("cuGetProcAddress_v2"));
    RawDriver d;
    get("cuModuleLoadData", reinterpret_cast<void**>(&d.load), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
    get("cuModuleGetFunction", reinterpret_cast<void**>(&d.function), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
    get("cuLaunchKernel", reinterpret_cast<void**>(&d.launch), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
    get("cuCtxSynchronize", reinterpret_cast<void**>(&d.synchronize), 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
    return d;
}

double quantile(std::vector<double> values, double fraction)
{
    std::sort(values.begin(), values.end());
    return values[static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1))];
}

}  // namespace

int main(int argc, char** argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 300, n = argc > 2 ? std::atoi(argv[2]) : 1000;
    const char* label = argc > 3 ? argv[3] : "";
    const char* root = std::getenv("CK_SOURCE_ROOT");
    const char* cache = std::getenv("CK_GPU_CLI_CACHE");
    auto gpu = ck::Gpu::system();
    std::string why;
    if (!gpu->available(&why) || !root || !cache) {
        std::fprintf(stderr, "launch-pairs: skipped: %s\n",
                     why.empty() ? "set CK_SOURCE_ROOT and CK_GPU_CLI_CACHE" : why.c_str());
        return 77;
    }
    fs::path package = fs::path(root) / "share/examples/particles/src/particles/kernels";
    ck::Config config = ck::load_config(package);
    config.cache_dir = cache;
    config.architectures = {gpu->current_device().arch()};
    ck::CatalogOptions options;
    options.load.config = config;
    auto catalog = ck::KernelCatalog::from_package(package, options);
    ck::Kernel& push = catalog["push"];
    push.compile();
    auto bx = gpu->allocate(markers * 8), bv = gpu->allocate(markers * 8), be = gpu->allocate(markers * 8);
    auto x = bx.view<double>({markers}), v = bv.view<double>({markers}), e = be.view<double>({markers});

    auto library = ck::util::DynamicLibrary::open_first({"libcuda.so.1"}, &why);
    RawDriver driver = raw_driver(library);
    std::string cubin = ck::util::read_file(push.load_info()->artifact);
    CUmodule module = nullptr;
    CUfunction raw = nullptr;
    driver.load(&module, cubin.data());
    driver.function(&raw, module, "push");
    CUdeviceptr px = bx.address(), pv = bv.address(), pe = be.address();
    double step = dt, box = length;
    long long count = markers;
    void* params[] = {&px, &pv, &pe, &step, &box, &count};
    ck::BackendGuard cuda(ck::Backend::cuda, true);

    auto time_raw = [&] {
        auto start = Clock::now();
        for (int i = 0; i < n; ++i) driver.launch(raw, 8, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
        return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
    };
    auto time_call = [&] {
        auto start = Clock::now();
        for (int i = 0; i < n; ++i) push(x, v, e, dt, length, markers);
        return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
    };
    for (int i = 0; i < 200; ++i) {  // clocks up, launch queue full
        time_raw();
        time_call();
    }
    std::vector<double> raws, calls, ratios;
    for (int r = 0; r < rounds; ++r) {
        double a = 0, b = 0;
        if (r % 2) {
            b = time_call();
            a = time_raw();
        } else {
            a = time_raw();
            b = time_call();
        }
        raws.push_back(a);
        calls.push_back(b);
        ratios.push_back(b / a);
    }
    driver.synchronize();
    std::printf(
        "%s rounds=%d n=%d raw_ns median %.0f [q1 %.0f q3 %.0f]  call_ns median %.0f [q1 %.0f q3 %.0f]  "
        "ratio median %.4f [q1 %.4f q3 %.4f]\n",
        label, rounds, n, quantile(raws, 0.5), quantile(raws, 0.25), quantile(raws, 0.75), quantile(calls, 0.5),
        quantile(calls, 0.25), quantile(calls, 0.75), quantile(ratios, 0.5), quantile(ratios, 0.25),
        quantile(ratios, 0.75));
    return 0;
}
