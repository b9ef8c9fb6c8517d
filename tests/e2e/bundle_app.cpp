// A rank of an MPI job as doc/bundle.md's job prologue sets it up: opens the
// example package's catalog from a bundle (KernelCatalog::from_bundle),
// attaches the C++ host kernels, and calls every kernel on device arrays.
// Run by tests/e2e/test_bundle.py over the fake libcuda.so.1, which launches
// nothing for real: this checks loading and launching, not results.
//
//   bundle-app BUNDLE [--markers N]
//
// Prints the porting line, then "loaded KERNEL how=... target=... key=...
// artifact=..." per CUDA kernel. Exit status: 0 ok, 3 ArtifactError (its
// message on stderr), 2 any other error.
#include "particles_host.hpp"

#include <cunumpy_kernels/error.hpp>
#include <cunumpy_kernels/gpu.hpp>
#include <cunumpy_kernels/kernel_catalog.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

ck::KernelCatalog open_catalog(const std::string& bundle)
{
    ck::CatalogOptions options;
    options.kernel.missing_cuda = ck::MissingCuda::fallback;  // sort is not ported
    options.kernel.dispatch = ck::Dispatch::arrays;
    auto catalog = ck::KernelCatalog::from_bundle(bundle, options);
    catalog.attach_host("push", ck::host_kernel(&particles::push));
    catalog.attach_host("deposit", ck::host_kernel(&particles::deposit));
    catalog.attach_host("sort", ck::host_kernel(&particles::sort));
    return catalog;
}

ck::DeviceBuffer device_zeros(const ck::Gpu& gpu, std::size_t bytes)
{
    ck::DeviceBuffer buffer = gpu.allocate(bytes);
    std::vector<char> zeros(bytes, 0);
    buffer.upload(zeros.data(), bytes);
    return buffer;
}

void launch_all(ck::KernelCatalog& catalog, const ck::Gpu& gpu, long long n)
{
    const long long n_cells = 16;
    std::size_t doubles = static_cast<std::size_t>(n) * sizeof(double);
    ck::DeviceBuffer x = device_zeros(gpu, doubles), v = device_zeros(gpu, doubles), e = device_zeros(gpu, doubles);
    ck::DeviceBuffer w = device_zeros(gpu, doubles), rho = device_zeros(gpu, n_cells * sizeof(double));
    ck::DeviceBuffer order = device_zeros(gpu, static_cast<std::size_t>(n) * sizeof(long long));
    ck::DeviceBuffer counts = device_zeros(gpu, n_cells * sizeof(long long));
    auto d = [n](const ck::DeviceBuffer& b) { return b.view<double>({n}); };
    catalog["push"](d(x), d(v), d(e), 0.05, 1.0, n);
    catalog["deposit"](d(x), d(w), rho.view<double>({n_cells}), 1.0 / n_cells, n, n_cells);
    catalog["sort"](d(x), 1.0 / n_cells, order.view<long long>({n}), counts.view<long long>({n_cells}), n, n_cells);
    gpu.synchronize();
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--markers")) {
        std::fprintf(stderr, "usage: bundle-app BUNDLE [--markers N]\n");
        return 2;
    }
    long long n = argc == 4 ? std::stoll(argv[3]) : 1000;
    try {
        ck::KernelCatalog catalog = open_catalog(argv[1]);
        std::printf("%s\n", catalog.summary().c_str());
        auto gpu = ck::Gpu::system();
        std::string why;
        if (!gpu->available(&why)) {
            std::printf("no GPU (%s)\n", why.c_str());
            return 0;
        }
        launch_all(catalog, *gpu, n);
        for (const auto& name : catalog.with_cuda()) {
            auto info = catalog[name].load_info();
            if (!info) continue;
            std::printf("loaded %s how=%s target=%s key=%s artifact=%s\n", name.c_str(), info->how.c_str(),
                        info->target.c_str(), info->key.c_str(), info->artifact.c_str());
        }
        std::printf("sort fallbacks=%llu\n", static_cast<unsigned long long>(catalog["sort"].transfers().fallbacks));
        return 0;
    } catch (const ck::ArtifactError& error) {
        std::fprintf(stderr, "ArtifactError: %s\n", error.what());
        return 3;
    } catch (const ck::Error& error) {
        std::fprintf(stderr, "bundle-app: %s\n", error.what());
        return 2;
    }
}
