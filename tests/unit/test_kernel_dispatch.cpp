// Kernel and KernelCatalog over a fake driver: which kernel a call runs, the
// fallback and its counts, implementation selection, launches and their
// checks, loading once per context from several threads.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "runtime/gpu_state.hpp"
#include "runtime/selection_state.hpp"
#include "runtime_package.hpp"

#include <doctest/doctest.h>

#include <thread>

TEST_SUITE_BEGIN("kernel_dispatch");

using namespace ck;
using test::CudaBackend;
using test::FakeCudaDriver;
using test::RuntimePackage;

namespace {

struct Fixture {
    Fixture()
    {
        package.build({"sm_80", "sm_90"}, true);
        RuntimePackage::emulate_push(*driver);
    }

    KernelCatalog catalog(CatalogOptions options)
    {
        auto catalog = KernelCatalog::from_package(package.package(), std::move(options));
        catalog.attach_host("push", host_kernel(&test::push_host));
        catalog.attach_host("sort", host_kernel(&test::sort_host));
        return catalog;
    }
    KernelCatalog catalog() { return catalog(package.options(driver)); }

    RuntimePackage package;
    std::shared_ptr<FakeCudaDriver> driver = std::make_shared<FakeCudaDriver>();
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "the catalog maps names to kernels and reports the porting status")
{
    auto c = catalog();
    CHECK(c.size() == 3);
    CHECK(c.names() == std::vector<std::string>{"push", "scale", "sort"});
    CHECK(c.with_cuda() == std::vector<std::string>{"push", "scale"});
    CHECK(c.without_cuda() == std::vector<std::string>{"sort"});
    CHECK(c.summary() == "CUDA kernels: 2 of 3 (missing: sort)");
    CHECK(c.summary(0) == "CUDA kernels: 2 of 3 (missing: ...)");
    CHECK(c.contains("push"));
    CHECK(c["push"].implementations() == std::vector<std::string>{"host", "cuda"});
    CHECK(c["scale"].implementations() == std::vector<std::string>{"cuda"});
    CHECK(c["sort"].cuda_path() == package.package() / "sort" / "sort_cuda.cu");
    CHECK_THROWS_WITH_AS(
        c["gather"], doctest::Contains("no kernel 'gather' in the catalog (it has: push, scale, sort)"), UsageError);
    c.check_signatures();
    CHECK(driver->loads == 0);  // opening a catalog loads nothing
}

TEST_CASE_FIXTURE(Fixture, "check_signatures lists every kernel whose parameters differ")
{
    package.tree.write("src/sim/kernels/push/push_kernels.py", "def push(x, e, n, dt):\n    pass\n");
    package.tree.write("src/sim/kernels/scale/scale_kernels.py", "def scale(y, n):\n    pass\n");
    auto c = catalog();
    try {
        c.check_signatures();
        FAIL("differences must be reported");
    } catch (const SignatureError& error) {
        std::string message = error.what();
        CHECK(message.find("kernel 'push': the host kernel takes (x, e, n, dt), the CUDA kernel (x, e, dt, n)") !=
              std::string::npos);
        CHECK(message.find("kernel 'scale': the host kernel takes (y, n), the CUDA kernel (y, factor, n)") !=
              std::string::npos);
    }
}

TEST_CASE_FIXTURE(Fixture, "on the host backend the host kernel runs with the arguments as they are")
{
    auto c = catalog();
    std::vector<double> x = {1, 2, 3}, e = {1, 1, 1};
    c["push"](host_array(x.data(), {3}), host_array(e.data(), {3}), 0.5, 3LL);
    CHECK(x == std::vector<double>{1.5, 2.5, 3.5});
    CHECK(c["push"].selected() == "host");
    CHECK(driver->launches().empty());
    CHECK_THROWS_WITH_AS(c["scale"](1.0),
                         doctest::Contains("kernel 'scale' has no host kernel attached and no Pyccel version from "
                                           "the cache (the cache "),
                         MissingKernelError);
    CHECK_THROWS_WITH_AS(c["scale"](1.0),
                         doctest::Contains("holds no build of sim.kernels.scale; run `cunumpy-kernels build`); "
                                           "attach one with catalog.attach_host(\"scale\""),
                         MissingKernelError);
    CHECK_THROWS_WITH_AS(
        c["push"](host_array(x.data(), {3}), 0.5),
        doctest::Contains("kernel 'push' (host implementation 'host'): the host kernel takes 4 arguments, got 2"),
        ArgumentError);
}

TEST_CASE_FIXTURE(Fixture, "on the CUDA backend the CUDA kernel is loaded from the cache and launched")
{
    auto c = catalog();
    auto gpu = GpuAccess::over(driver);
    CudaBackend cuda;
    std::vector<double> x = {1, 2, 3, 4}, e = {10, 20, 30, 40};
    DeviceBuffer dx = gpu->allocate(32), de = gpu->allocate(32);
    dx.upload(x.data(), 32);
    de.upload(e.data(), 32);
    c["push"](dx.view<double>({4}), de.view<double>({4}), 0.5, 4LL);
    auto launches = driver->launches();
    REQUIRE(launches.size() == 1);
    CHECK(launches[0].symbol == "push");
    CHECK(launches[0].grid[0] == 1);
    CHECK(launches[0].block[0] == 128);  // the default block, 4 threads from the first array
    CHECK(FakeCudaDriver::param<double>(launches[0], 2) == 0.5);
    dx.download(x.data(), 32);
    CHECK(x == std::vector<double>{6, 12, 18, 24});
    auto info = c["push"].load_info();
    REQUIRE(info);
    CHECK(info->how == "cubin");
    CHECK(info->target == "sm_90");
    CHECK(info->device == "Fake H200 (sm_90)");
    CHECK(info->artifact.filename() == "push.sm_90.cubin");
    CHECK(driver->images() == std::vector<std::string>{"ELF"});
    CHECK(c["push"].selected(true) == "cuda");
    // the CUDA kernel gets host arrays refused, never copied
    CHECK_THROWS_WITH_AS(c["push"](host_array(x.data(), {4}), de.view<double>({4}), 0.5, 4LL),
                         doctest::Contains("arrays are never copied to the device implicitly"), ArgumentError);
    // explicit launch sizes, a stream
    auto stream = reinterpret_cast<Stream>(0x1234);
    c["push"](Launch{.n_threads = Dim3(1000), .block = Dim3(256), .stream = stream}, dx.view<double>({4}),
              de.view<double>({4}), 0.5, 4LL);
    launches = driver->launches();
    CHECK(launches.back().grid[0] == 4);
    CHECK(launches.back().block[0] == 256);
    CHECK(launches.back().stream == reinterpret_cast<CUstream>(stream));
    CHECK(driver->loads == 1);
}

TEST_CASE("a template kernel is launched by the lowered name of its instantiation, typed with its arguments")
{
    RuntimePackage package;
    package.tree.write("src/sim/kernels/scale/scale_cuda.cu",
                       "template <typename T>\n__global__ void scale(T* y, T factor, int n)\n"
                       "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] *= factor;\n}\n");
    package.config.template_args["scale"] = {"float"};
    BuildReport report = package.build({"sm_90"}, false);
    for (const auto& job : report.jobs) REQUIRE_MESSAGE(job.state == JobState::built, job.log);
    auto driver = std::make_shared<FakeCudaDriver>();
    // The driver's layout of the instantiation: checked against the substituted types.
    driver->functions["_Z5scaleIfEvPT_S0_i"].param_sizes = std::vector<std::size_t>{8, 4, 4};
    driver->functions["_Z5scaleIdEvPT_S0_i"].param_sizes = std::vector<std::size_t>{8, 8, 4};
    auto c = KernelCatalog::from_package(package.package(), package.options(driver));
    auto gpu = GpuAccess::over(driver);
    CudaBackend cuda;
    DeviceBuffer dy = gpu->allocate(16);
    c["scale"](dy.view<float>({4}), 2.0f, 4);
    auto launches = driver->launches();
    REQUIRE(launches.size() == 1);
    CHECK(launches[0].symbol == "_Z5scaleIfEvPT_S0_i");
    CHECK(FakeCudaDriver::param<float>(launches[0], 1) == 2.0f);
    // T is float: a double array is refused before the launch.
    DeviceBuffer dd = gpu->allocate(32);
    CHECK_THROWS_AS(c["scale"](dd.view<double>({4}), 2.0f, 4), ArgumentError);
    // Other arguments, another key: the float entry does not serve double, and
    // the entry the runtime builds by NVRTC on the miss is the double one.
    package.config.template_args["scale"] = {"double"};
    auto d = KernelCatalog::from_package(package.package(), package.options(driver));
    d["scale"](dd.view<double>({4}), 2.0, 4);
    CHECK(driver->launches().back().symbol == "_Z5scaleIdEvPT_S0_i");
    auto info = d["scale"].load_info();
    REQUIRE(info);
    CHECK(info->how == "nvrtc");
}

TEST_CASE_FIXTURE(Fixture,
                  "dispatch by arrays: device arrays run CUDA, host arrays the host kernel, whatever the backend")
{
    auto options = package.options(driver);
    options.kernel.dispatch = Dispatch::arrays;
    auto c = catalog(options);
    auto gpu = GpuAccess::over(driver);
    DeviceBuffer dx = gpu->allocate(16), de = gpu->allocate(16);
    std::vector<double> x = {1, 2}, e = {1, 1};
    c["push"](dx.view<double>({2}), de.view<double>({2}), 1.0, 2LL);
    CHECK(driver->launches().size() == 1);
    {
        CudaBackend cuda;
        c["push"](host_array(x.data(), {2}), host_array(e.data(), {2}), 1.0, 2LL);
    }
    CHECK(x == std::vector<double>{2, 3});
    CHECK(driver->launches().size() == 1);
}

TEST_CASE_FIXTURE(Fixture, "missing_cuda = raise names where the CUDA kernel is expected")
{
    auto c = catalog();
    auto gpu = GpuAccess::over(driver);
    DeviceBuffer dx = gpu->allocate(16);
    CudaBackend cuda;
    CHECK_THROWS_WITH_AS(
        c["sort"](dx.view<double>({2}), 2LL),
        doctest::Contains(doctest::String(("No CUDA version of kernel 'sort' (expected " +
                                           (package.package() / "sort" / "sort_cuda.cu").string() + ")")
                                              .c_str())),
        MissingKernelError);
    CHECK_THROWS_AS(c["sort"].selected(true), MissingKernelError);
    CHECK(c.transfers().none());
}

TEST_CASE_FIXTURE(Fixture, "missing_cuda = fallback copies device arrays to the host and back, warns once, counts")
{
    auto options = package.options(driver);
    options.kernel.missing_cuda = MissingCuda::fallback;
    auto c = catalog(options);
    auto gpu = GpuAccess::over(driver);
    std::vector<double> x = {3, 1, 2};
    DeviceBuffer dx = gpu->allocate(24);
    dx.upload(x.data(), 24);
    CudaBackend cuda;
    CHECK(c["sort"].selected(true) == "host");
    c["sort"](dx.view<double>({3}), 3LL);
    dx.download(x.data(), 24);
    CHECK(x == std::vector<double>{1, 2, 3});
    c["sort"](dx.view<double>({3}), 3LL);
    TransferCounts counts = c["sort"].transfers();
    CHECK(counts.fallbacks == 2);
    CHECK(counts.to_host == 2);
    CHECK(counts.to_host_bytes == 48);
    CHECK(counts.to_device == 2);
    CHECK(counts.to_device_bytes == 48);
    CHECK(c.transfers() == counts);
    CHECK(driver->synchronizations >= 2);  // waits for running kernels before copying
    REQUIRE(package.warnings.size() == 1);
    CHECK(package.warnings[0].find("No CUDA version of kernel 'sort': calling the host kernel") != std::string::npos);
    // ported kernels make no transfer
    CHECK(c["push"].transfers().none());
}

TEST_CASE_FIXTURE(Fixture, "a fallback whose copy to the host fails is neither warned about nor counted")
{
    auto options = package.options(driver);
    options.kernel.missing_cuda = MissingCuda::fallback;
    auto c = catalog(options);
    auto gpu = GpuAccess::over(driver);
    DeviceBuffer dx = gpu->allocate(24);
    CudaBackend cuda;
    driver->fail_copies_to_host = true;
    CHECK_THROWS_AS(c["sort"](dx.view<double>({3}), 3LL), CudaError);
    CHECK(c["sort"].transfers().fallbacks == 0);
    CHECK(package.warnings.empty());
    driver->fail_copies_to_host = false;
    c["sort"](dx.view<double>({3}), 3LL);
    CHECK(c["sort"].transfers().fallbacks == 1);
    CHECK(package.warnings.size() == 1);
}

TEST_CASE_FIXTURE(Fixture, "the fallback copies back only the declared outputs")
{
    auto options = package.options(driver);
    options.kernel.missing_cuda = MissingCuda::fallback;
    options.kernel.outputs = std::vector<int>{};
    auto c = catalog(options);
    auto gpu = GpuAccess::over(driver);
    std::vector<double> x = {3, 1, 2};
    DeviceBuffer dx = gpu->allocate(24);
    dx.upload(x.data(), 24);
    CudaBackend cuda;
    c["sort"](dx.view<double>({3}), 3LL);
    dx.download(x.data(), 24);
    CHECK(x == std::vector<double>{3, 1, 2});
    CHECK(c["sort"].transfers().to_device == 0);
    CHECK(c["sort"].transfers().to_host == 1);
}

TEST_CASE_FIXTURE(Fixture, "an explicit CUDA choice never falls back")
{
    auto options = package.options(driver);
    options.kernel.missing_cuda = MissingCuda::fallback;
    auto c = catalog(options);
    auto gpu = GpuAccess::over(driver);
    DeviceBuffer dx = gpu->allocate(16);
    CudaBackend cuda;
    DeviceImplementationGuard explicit_cuda("cuda");
    CHECK_THROWS_WITH_AS(c["sort"](dx.view<double>({2}), 2LL),
                         doctest::Contains("kernel 'sort' has no 'cuda' implementation (explicitly selected"),
                         ImplementationError);
    CHECK_THROWS_AS(c["sort"].selected(true), ImplementationError);
    CHECK(c["sort"].transfers().none());
    {
        DeviceImplementationGuard automatic(std::nullopt);
        c["sort"](dx.view<double>({2}), 2LL);
    }
    CHECK(c["sort"].transfers().fallbacks == 1);
}

TEST_CASE("host implementations: the first available, the chosen one or an error, python with a warning")
{
    std::vector<std::string> warnings;
    KernelOptions options;
    options.warn = [&](const std::string& m) { warnings.push_back(m); };
    Kernel kernel("push", options);
    std::string ran;
    auto recorder = [&](const std::string& name) {
        return HostKernel([&ran, name](std::span<const Argument>) { ran = name; });
    };
    kernel.attach_host("python", recorder("python"));
    kernel(1.0);
    CHECK(ran == "python");
    kernel(1.0);
    CHECK(warnings.size() == 1);
    CHECK(warnings[0].find("running the uncompiled Python version") != std::string::npos);
    kernel.attach_host("numpy", recorder("numpy"));
    kernel.attach_host("pyccel", recorder("pyccel"));
    CHECK(kernel.implementations() == std::vector<std::string>{"pyccel", "numpy", "python"});
    kernel(1.0);
    CHECK(ran == "pyccel");
    {
        HostImplementationGuard numpy("numpy");
        CHECK(kernel.selected() == "numpy");
        kernel(1.0);
        CHECK(ran == "numpy");
    }
    {
        HostImplementationGuard numba("numba");
        CHECK_THROWS_WITH_AS(
            kernel(1.0),
            doctest::Contains("kernel 'push' has no 'numba' implementation (it has pyccel, numpy, python)"),
            ImplementationError);
    }
    CHECK_THROWS_AS(kernel.attach_host(recorder("plain")), UsageError);
    CHECK_THROWS_WITH_AS(kernel.attach_host("cython", recorder("x")), doctest::Contains("must be one of"), UsageError);

    Kernel plain("deposit");
    plain.attach_host(recorder("plain"));
    HostImplementationGuard numba("numba");  // a plain host kernel has no choice to make
    plain(1.0);
    CHECK(ran == "plain");
    CHECK(plain.selected() == "host");
    CHECK_THROWS_AS(plain.attach_host("numpy", recorder("numpy")), UsageError);
}

TEST_CASE_FIXTURE(Fixture, "an empty grid launches nothing and loads nothing, but arguments are still checked")
{
    auto c = catalog();
    auto gpu = GpuAccess::over(driver);
    DeviceBuffer dx = gpu->allocate(8);
    CudaBackend cuda;
    c["push"](dx.view<double>({0}), dx.view<double>({0}), 0.5, 0LL);
    CHECK(driver->launches().empty());
    CHECK(driver->loads == 0);
    CHECK_THROWS_AS(c["push"](Launch{.n_threads = Dim3(0)}, dx.view<double>({0}), 0.5), ArgumentError);
}

TEST_CASE_FIXTURE(Fixture, "launches are checked against the device's and the kernel's limits; shared memory opts in")
{
    driver->functions["scale"].max_threads_per_block = 256;  // as __launch_bounds__(256) would
    driver->functions["scale"].param_sizes = std::vector<std::size_t>{8, 4, 4};
    auto c = catalog();
    auto gpu = GpuAccess::over(driver);
    DeviceBuffer y = gpu->allocate(4096);
    CudaBackend cuda;
    auto view = y.view<float>({1024});
    CHECK_THROWS_WITH_AS(
        c["scale"](Launch{.n_threads = Dim3(1024), .block = Dim3(512)}, view, 2.0f, 1024),
        doctest::Contains(
            "kernel 'scale' on CUDA device 0 (Fake H200): block (512,) has 512 threads, exceeding the 256"),
        LaunchError);
    CHECK_THROWS_WITH_AS(c["scale"](Launch{.grid = Dim3(1, 70000), .block = Dim3(32)}, view, 2.0f, 1024),
                         doctest::Contains("grid[1]=70000 exceeds the 65535 limit"), LaunchError);
    CHECK_THROWS_WITH_AS(c["scale"](Launch{.n_threads = Dim3(1024), .shared_mem = 300 * 1024}, view, 2.0f, 1024),
                         doctest::Contains("exceeds the 232448 bytes"), LaunchError);
    c["scale"](Launch{.n_threads = Dim3(1024), .shared_mem = 100 * 1024}, view, 2.0f, 1024);
    auto launches = driver->launches();
    REQUIRE(launches.size() == 1);
    CHECK(launches[0].shared_mem == 100 * 1024);
    CHECK(FakeCudaDriver::param<float>(launches[0], 1) == 2.0f);
    CHECK(FakeCudaDriver::param<int>(launches[0], 2) == 1024);
    CHECK_THROWS_WITH_AS(c["scale"](view, 2.0f, 1LL << 40), doctest::Contains("argument 2 (int n)"), ArgumentError);
}

TEST_CASE_FIXTURE(Fixture, "a module is loaded once per context and shared by threads calling at once")
{
    auto c = catalog();
    auto gpu = GpuAccess::over(driver);
    DeviceBuffer dx = gpu->allocate(8 * 64), de = gpu->allocate(8 * 64);
    CUcontext context = GpuAccess::state(*gpu).current_context().context;
    CudaBackend cuda;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            driver->context_set_current(context);
            try {
                for (int i = 0; i < 50; ++i) c["push"](dx.view<double>({64}), de.view<double>({64}), 0.0, 64LL);
            } catch (...) {
                ++failures;
            }
        });
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
    CHECK(driver->loads == 1);
    CHECK(driver->launches().size() == 400);
}

TEST_CASE_FIXTURE(Fixture, "compile_all loads every CUDA kernel now, then reports the first error")
{
    auto c = catalog();
    CHECK(c.compile_all(2) == std::vector<std::string>{"push", "scale"});
    CHECK(driver->loads == 2);
    CHECK(c["scale"].load_info());
    CHECK_FALSE(c["sort"].compile());

    driver->missing_symbols.insert("push");
    driver->missing_symbols.insert("scale");
    auto broken = catalog();
    CHECK_THROWS_AS(broken.compile_all(std::nullopt), ArtifactError);
}

TEST_CASE_FIXTURE(Fixture, "no working driver: host kernels run, a CUDA call says why")
{
    driver->init_result = CUDA_ERROR_NO_DEVICE;
    auto c = catalog();
    std::vector<double> x = {1}, e = {1};
    c["push"](host_array(x.data(), {1}), host_array(e.data(), {1}), 1.0, 1LL);
    CHECK(x[0] == 2.0);
    CudaBackend cuda;
    CHECK_THROWS_WITH_AS(c["push"].compile(), doctest::Contains("cuInit failed"), CudaError);
    std::string why;
    CHECK_FALSE(GpuAccess::over(driver)->available(&why));
    CHECK(why.find("cuInit failed") != std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "two kernels of one name in a tree are refused")
{
    package.tree.write("src/sim/other/__init__.py", "");
    package.tree.write("src/sim/other/push/push_kernels.py", "def push(x):\n    pass\n");
    CHECK_THROWS_WITH_AS(KernelCatalog::from_package(package.tree / "src/sim", package.options(driver)),
                         doctest::Contains("two kernels are named 'push'"), UsageError);
}

TEST_CASE_FIXTURE(Fixture, "Kernel::from_folder builds the kernel of one folder")
{
    LoadOptions load;
    load.config = package.config;
    load.gpu = GpuAccess::over(driver);
    Kernel push = Kernel::from_folder(package.package() / "push", {}, load);
    CHECK(push.name() == "push");
    CHECK(push.has_cuda());
    CHECK(push.cuda_parameters() == std::vector<std::string>{"x", "e", "dt", "n"});
    CHECK(push.compile());
    CHECK_THROWS_AS(Kernel::from_folder(package.package(), {}, load), UsageError);
}

TEST_SUITE_END();
