// The real loader: dlopen of libcuda.so.1 and every entry point through
// cuGetProcAddress. Run by meson with LD_LIBRARY_PATH on the project's fake
// libcuda.so.1 (tests/fake_cuda), so the success path runs without a GPU.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "runtime/cuda_driver.hpp"
#include "runtime_package.hpp"
#include "util/dynamic_library.hpp"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace ck;

namespace {

bool fake_expected()
{
    const char* value = std::getenv("CK_FAKE_LIBCUDA");
    return value && std::string(value) == "1";
}

int fake_launches()
{
    std::string error;
    auto library = util::DynamicLibrary::open_first({"libcuda.so.1"}, &error);
    auto count = reinterpret_cast<int (*)()>(library.symbol("fake_cuda_launches"));
    return count ? count() : -1;
}

}  // namespace

TEST_CASE("no libcuda.so.1: the loader says 'no CUDA driver' and why")
{
    std::string why;
    CHECK(load_cuda_driver({"libcuda-that-does-not-exist.so.1"}, &why) == nullptr);
    CHECK(why.find("no CUDA driver (libcuda-that-does-not-exist.so.1: cannot open shared object file") == 0);
    // A library without cuGetProcAddress_v2 is not a usable driver.
    CHECK(load_cuda_driver({"libm.so.6"}, &why) == nullptr);
    CHECK(why.find("has no cuGetProcAddress_v2") != std::string::npos);
}

TEST_CASE("the fake libcuda.so.1 loads through cuGetProcAddress and serves the whole runtime")
{
    if (!fake_expected()) {
        MESSAGE("skipped: run through meson, which points LD_LIBRARY_PATH at the fake libcuda.so.1");
        return;
    }
    std::string why;
    auto driver = load_cuda_driver(default_cuda_driver_names(), &why);
    REQUIRE_MESSAGE(driver, why);
    CHECK(driver->init() == CUDA_SUCCESS);
    int count = 0;
    CHECK(driver->device_count(&count) == CUDA_SUCCESS);
    CHECK(count == 1);
    std::size_t offset = 0, size = 0;
    CHECK(driver->function_param_info(nullptr, 0, &offset, &size) == CUDA_ERROR_NOT_SUPPORTED);  // optional entry

    auto gpu = Gpu::system();
    REQUIRE(gpu->available(&why));
    DeviceInfo device = gpu->current_device();
    CHECK(device.name == "Fake libcuda device");
    CHECK(device.arch() == "sm_90");
    CHECK(device.shared_per_block_optin == 232448);
    DeviceBuffer buffer = gpu->allocate(16);
    double in[2] = {1.5, 2.5}, out[2] = {};
    buffer.upload(in, sizeof in);
    buffer.download(out, sizeof out);
    CHECK(out[1] == 2.5);

    test::RuntimePackage package;
    package.build({"sm_90"}, false);
    CatalogOptions options;
    options.load.config = package.config;
    auto catalog = KernelCatalog::from_package(package.package(), options);
    set_backend(Backend::cuda, true);  // the process's own probe finds the fake
    CHECK(get_backend() == Backend::cuda);
    int before = fake_launches();
    DeviceBuffer x = gpu->allocate(64), e = gpu->allocate(64);
    catalog["push"](x.view<double>({8}), e.view<double>({8}), 0.5, 8LL);
    CHECK(fake_launches() == before + 1);
    CHECK(catalog["push"].load_info()->how == "cubin");
    set_backend(Backend::host);
}
