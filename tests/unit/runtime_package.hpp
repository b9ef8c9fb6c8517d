// A small kernel package in a temporary folder, with its cache in the same
// folder, for runtime tests: `push` and `scale` have CUDA kernels, `sort` is
// not ported. Builds use the library `build` runs (NVRTC needs no GPU).
#pragma once

#include "builder/build.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "fake_cuda_driver.hpp"
#include "runtime/gpu_state.hpp"
#include "runtime/selection_state.hpp"
#include "temp_tree.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ck::test {

// Selects the CUDA backend for a scope (the process probe would find no
// driver here; the catalogs of these tests use a fake one).
struct CudaBackend {
    static bool works(std::string*) { return true; }
    Backend previous = get_backend();
    CudaBackend() { set_backend_with(Backend::cuda, false, works); }
    ~CudaBackend() { set_backend_with(previous, false, works); }
};

inline const char* const push_cuda =
    "// One thread per marker.\n"
    "extern \"C\" __global__ void push(double* x, const double* e, double dt, long long n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] += dt * e[i];\n"
    "}\n";

inline const char* const scale_cuda =
    "extern \"C\" __global__ void scale(float* y, float factor, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] *= factor;\n"
    "}\n";

/// The host versions, in C++, as an application attaches them.
inline void push_host(double* x, const double* e, double dt, long long n)
{
    for (long long i = 0; i < n; ++i) x[i] += dt * e[i];
}

inline void sort_host(double* x, long long n) { std::sort(x, x + n); }

class RuntimePackage {
public:
    /// The package under `<tree>/<folder>` (default: the tree itself).
    explicit RuntimePackage(const std::string& folder = "") : base(folder.empty() ? "" : folder + "/")
    {
        tree.write(base + "src/sim/__init__.py", "");
        tree.write(base + "src/sim/kernels/__init__.py", "");
        tree.write(base + "src/sim/kernels/push/push_kernels.py",
                   "def push(x: 'float[:]', e: 'float[:]', dt: float, n: int):\n    pass\n");
        tree.write(base + "src/sim/kernels/push/push_cuda.cu", push_cuda);
        tree.write(base + "src/sim/kernels/scale/scale_kernels.py",
                   "def scale(y: 'float32[:]', factor: float, n: int):\n    pass\n");
        tree.write(base + "src/sim/kernels/scale/scale_cuda.cu", scale_cuda);
        tree.write(base + "src/sim/kernels/sort/sort_kernels.py", "def sort(x: 'float[:]', n: int):\n    pass\n");
        config.cache_dir = cache();
        config.architectures = {"sm_80", "sm_90"};
        config.ptx = true;
    }

    std::filesystem::path package() const { return tree / (base + "src/sim/kernels"); }
    std::filesystem::path cache() const { return tree / (base + "cache"); }

    /// Runs `build` for `architectures` (plus PTX of the newest when `ptx`).
    BuildReport build(std::vector<std::string> architectures, bool ptx)
    {
        BuildRequest request;
        request.paths = {package()};
        request.config = config;
        request.config.architectures = std::move(architectures);
        request.config.ptx = ptx;
        request.config.jobs = 2;
        request.host = false;  // the runtime loads CUDA entries; host kernels are C++ here
        return run_build(request);
    }

    /// Catalog options over `driver`, warnings collected in `warnings`.
    CatalogOptions options(const std::shared_ptr<FakeCudaDriver>& driver)
    {
        CatalogOptions options;
        options.load.config = config;
        options.load.gpu = GpuAccess::over(driver);
        options.kernel.warn = [this](const std::string& message) { warnings.push_back(message); };
        return options;
    }

    /// Makes the fake run `push` as the GPU would, on its host "device" memory.
    static void emulate_push(FakeCudaDriver& driver)
    {
        driver.functions["push"].param_sizes = std::vector<std::size_t>{8, 8, 8, 8};
        driver.on_launch["push"] = [](const FakeLaunch& launch) {
            auto* x = FakeCudaDriver::param<double*>(launch, 0);
            auto* e = FakeCudaDriver::param<const double*>(launch, 1);
            double dt = FakeCudaDriver::param<double>(launch, 2);
            auto n = FakeCudaDriver::param<long long>(launch, 3);
            long long threads = static_cast<long long>(launch.grid[0]) * launch.block[0];
            for (long long i = 0; i < n && i < threads; ++i) x[i] += dt * e[i];
        };
    }

    TempTree tree;
    std::string base;  ///< "" or "<folder>/"
    Config config;
    std::vector<std::string> warnings;
};

}  // namespace ck::test
