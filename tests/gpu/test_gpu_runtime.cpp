// GPU tests of the runtime: loading from a cache built by `build`, launches
// and parity with the host kernels, the PTX path, NVRTC on a miss, launch
// limits, structs by value, and launches from several threads.
//
// The program uses only the public headers and the shared library, and fills
// caches with the CLI, as an application does: it builds against an installed
// library or the wheel's as well as against build/.
//
// Without a usable GPU the program prints why and exits 77, which meson
// counts as skipped. Environment (set by the GPU run, optional here):
//   CK_GPU_CLI_CACHE        cache the CLI filled for the example package
//   CK_CUNUMPY_INCLUDE_DIR  cunumpy's CUDA headers (the example's deposit needs them)
//   CK_SOURCE_ROOT          the repository, when the binary runs away from its tree
//   CK_CLI                  the cunumpy-kernels that fills caches (default: the build's)
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "particles_host.hpp"
#include "temp_tree.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

using namespace ck;

namespace {

std::optional<std::filesystem::path> env_path(const char* name)
{
    const char* value = std::getenv(name);
    if (!value || !*value) return std::nullopt;
    return std::filesystem::path(value);
}

// The repository: CK_SOURCE_ROOT when the binary runs away from its tree.
std::filesystem::path example_src()
{
    auto root = env_path("CK_SOURCE_ROOT");
#ifdef CK_SOURCE_ROOT
    if (!root) root = CK_SOURCE_ROOT;
#endif
    if (!root) FAIL("CK_SOURCE_ROOT is not set: name the repository (or a copy holding share/examples)");
    return *root / "share" / "examples" / "particles" / "src";
}

// CK_CLI, else the CLI of the build this program came from.
std::string cli_path()
{
    if (auto cli = env_path("CK_CLI")) return cli->string();
#ifdef CK_CLI_PATH
    return CK_CLI_PATH;
#else
    FAIL("CK_CLI is not set: name the cunumpy-kernels executable that fills the caches");
    return {};
#endif
}

std::string shell_quoted(const std::string& word)
{
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// `cunumpy-kernels build --only cuda` of `tree` into `cache_dir`: true when it exits 0.
bool cli_build(const std::filesystem::path& tree, const std::filesystem::path& cache_dir,
               const std::vector<std::string>& architectures, bool ptx,
               const std::optional<std::filesystem::path>& cunumpy_include = std::nullopt)
{
    std::string command = shell_quoted(cli_path()) + " build --only cuda --cache-dir " + shell_quoted(cache_dir);
    std::string targets;
    for (const auto& arch : architectures) targets += (targets.empty() ? "" : ",") + arch;
    command += " --arch " + shell_quoted(targets);
    if (!ptx) command += " --no-ptx";
    if (cunumpy_include) command += " --cunumpy-include-dir " + shell_quoted(*cunumpy_include);
    command += " " + shell_quoted(tree);
    MESSAGE(command);
    return std::system(command.c_str()) == 0;
}

// Kernels that exercise what the example does not: structs, shared memory,
// __launch_bounds__.
const char* const axpy_struct_cuda =
    "struct Params { double a; long long n; };\n"
    "extern \"C\" __global__ void axpy_struct(Params p, const double* x, double* y)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < p.n) y[i] += p.a * x[i];\n"
    "}\n";

const char* const shared_copy_cuda =
    "extern \"C\" __global__ void shared_copy(const double* x, double* y, long long n)\n"
    "{\n"
    "    extern __shared__ double buffer[];\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) buffer[threadIdx.x] = 2.0 * x[i];\n"
    "    __syncthreads();\n"
    "    if (i < n) y[i] = buffer[threadIdx.x];\n"
    "}\n";

const char* const bounded_cuda =
    "extern \"C\" __global__ void __launch_bounds__(128) bounded(int* out, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = i;\n"
    "}\n";

const char* const scale_cuda =
    "extern \"C\" __global__ void scale(double* y, double factor, long long n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] *= factor;\n"
    "}\n";

struct Params {
    double a;
    long long n;
};

class GpuPackage {
public:
    GpuPackage()
    {
        tree.write("src/gpusim/__init__.py", "");
        tree.write("src/gpusim/kernels/__init__.py", "");
        add("axpy_struct", "p, x, y", axpy_struct_cuda);
        add("shared_copy", "x, y, n", shared_copy_cuda);
        add("bounded", "out, n", bounded_cuda);
        add("scale", "y, factor, n", scale_cuda);
        config.cache_dir = tree / "cache";
    }

    void add(const std::string& name, const std::string& parameters, const std::string& cuda)
    {
        tree.write("src/gpusim/kernels/" + name + "/" + name + "_kernels.py",
                   "def " + name + "(" + parameters + "):\n    pass\n");
        tree.write("src/gpusim/kernels/" + name + "/" + name + "_cuda.cu", cuda);
    }

    // The CLI reads the package's pyproject.toml: the template arguments of
    // `config` go there, as a user's would.
    bool build(const std::vector<std::string>& architectures, bool ptx)
    {
        std::string table;
        for (const auto& [kernel, arguments] : config.template_args) {
            std::string list;
            for (const auto& argument : arguments) list += (list.empty() ? "\"" : ", \"") + argument + "\"";
            table += (table.empty() ? "" : ", ") + kernel + " = [" + list + "]";
        }
        tree.write("pyproject.toml", "[tool.cunumpy-kernels]\ntemplate-args = { " + table + " }\n");
        return cli_build(tree / "src/gpusim/kernels", *config.cache_dir, architectures, ptx);
    }

    KernelCatalog catalog(bool read_only = false)
    {
        CatalogOptions options;
        options.load.config = config;
        options.load.read_only_cache = read_only;
        options.kernel.dispatch = Dispatch::arrays;
        return KernelCatalog::from_package(tree / "src/gpusim/kernels", options);
    }

    test::TempTree tree;
    Config config;
};

template <typename T>
struct DeviceVector {
    DeviceVector(const std::vector<T>& host)
        : buffer(Gpu::system()->allocate(host.size() * sizeof(T))), size(host.size())
    {
        buffer.upload(host.data(), size * sizeof(T));
    }
    ArrayView view() const { return buffer.view<T>({static_cast<std::int64_t>(size)}); }
    std::vector<T> read() const
    {
        std::vector<T> host(size);
        buffer.download(host.data(), size * sizeof(T));
        return host;
    }
    DeviceBuffer buffer;
    std::size_t size;
};

std::vector<double> ramp(std::size_t n, double step = 1.0)
{
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = step * static_cast<double>(i);
    return v;
}

}  // namespace

TEST_CASE("the example package: loaded from the cache `build` filled, parity with the C++ host kernels")
{
    auto include = env_path("CK_CUNUMPY_INCLUDE_DIR");
    if (!include) {
        MESSAGE("skipped: CK_CUNUMPY_INCLUDE_DIR is not set (the example's deposit includes cunumpy/atomic.cuh)");
        return;
    }
    test::TempTree scratch;
    Config config = load_config(example_src());
    config.cunumpy_include_dir = *include;
    auto cli_cache = env_path("CK_GPU_CLI_CACHE");
    config.cache_dir = cli_cache ? *cli_cache : scratch / "cache";
    if (!cli_cache) REQUIRE(cli_build(example_src(), *config.cache_dir, config.architectures, config.ptx, *include));
    CatalogOptions options;
    options.load.config = config;
    options.load.read_only_cache = true;  // a hit must need no build
    options.kernel.dispatch = Dispatch::arrays;
    options.kernel.missing_cuda = MissingCuda::fallback;
    auto catalog = KernelCatalog::from_package(example_src() / "particles" / "kernels", options);
    catalog.attach_host("push", host_kernel(&particles::push));
    catalog.attach_host("deposit", host_kernel(&particles::deposit));
    catalog.attach_host("sort", host_kernel(&particles::sort));
    catalog.check_signatures();
    CHECK(catalog.compile_all(2) == std::vector<std::string>{"deposit", "push"});
    for (const char* name : {"push", "deposit"}) {
        auto info = catalog[name].load_info();
        REQUIRE(info);
        CHECK(info->how == "cubin");
        CHECK(info->target == Gpu::system()->current_device().arch());
        CHECK_FALSE(info->published);
        MESSAGE(std::string(std::string(name) + ": " + info->how + " " + info->target + " from " +
                            info->artifact.string() + " in " + std::to_string(info->seconds * 1e3) + " ms"));
    }

    const long long n = 200000, n_cells = 64;
    const double length = 1.0, dx = length / n_cells, dt = 0.05;
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> unit(0, 1);
    std::vector<double> x(n), v(n), e(n), w(n, 1.0 / n), rho(n_cells, 0.0);
    for (long long i = 0; i < n; ++i) {
        x[i] = unit(random);
        v[i] = unit(random) - 0.5;
        e[i] = unit(random) - 0.5;
    }
    DeviceVector<double> dx_(x), dv(v), de(e), dw(w), drho(rho), dx0(x);
    std::vector<long long> order(n), counts(n_cells);
    DeviceVector<long long> dorder(order), dcounts(counts);

    auto before = catalog.transfers();
    catalog["push"](dx_.view(), dv.view(), de.view(), dt, length, n);
    catalog["deposit"](dx0.view(), dw.view(), drho.view(), dx, n, n_cells);
    CHECK((catalog.transfers() == before));  // ported kernels copy nothing
    catalog["sort"](dx0.view(), dx, dorder.view(), dcounts.view(), n, n_cells);
    Gpu::system()->synchronize();

    std::vector<double> hx = x, hv = v, hrho = rho;
    particles::push(hx.data(), hv.data(), e.data(), dt, length, n);
    particles::deposit(x.data(), w.data(), hrho.data(), dx, n, n_cells);
    particles::sort(x.data(), dx, order.data(), counts.data(), n, n_cells);
    auto gx = dx_.read(), gv = dv.read(), grho = drho.read();
    for (long long i = 0; i < n; ++i) {
        REQUIRE(std::abs(gx[i] - hx[i]) <= 1e-12);
        REQUIRE(std::abs(gv[i] - hv[i]) <= 1e-12);
    }
    for (long long c = 0; c < n_cells; ++c) REQUIRE(std::abs(grho[c] - hrho[c]) <= 1e-9);
    CHECK(dorder.read() == order);
    CHECK(dcounts.read() == counts);
    auto t = catalog["sort"].transfers();
    CHECK(t.fallbacks == 1);
    CHECK(t.to_host == 3);  // x, order, counts
    CHECK(t.to_device == 3);
}

TEST_CASE("structs by value, checked against the driver's parameter layout")
{
    GpuPackage package;
    REQUIRE(package.build({"sm_90"}, false));
    auto catalog = package.catalog();
    std::vector<double> x = ramp(1000), y(1000, 1.0);
    DeviceVector<double> dx(x), dy(y);
    Params params{2.0, 1000};
    catalog["axpy_struct"](struct_value(params, "Params"), dx.view(), dy.view());
    auto result = dy.read();
    for (int i = 0; i < 1000; ++i) REQUIRE(result[i] == 1.0 + 2.0 * i);
    struct Small {
        double a;
    } small{1.0};
    CHECK_THROWS_WITH_AS(
        catalog["axpy_struct"](Launch{.n_threads = Dim3(10)}, struct_value(small), dx.view(), dy.view()),
        doctest::Contains("must be a struct of 16 bytes (the size the driver reports for Params)"), ArgumentError);
}

TEST_CASE("limits: __launch_bounds__, dynamic shared memory with the opt-in above 48 KiB")
{
    GpuPackage package;
    REQUIRE(package.build({"sm_90"}, false));
    auto catalog = package.catalog();
    DeviceVector<int> out(std::vector<int>(1024, -1));
    catalog["bounded"](Launch{.n_threads = Dim3(1024), .block = Dim3(128)}, out.view(), 1024);
    auto values = out.read();
    CHECK(values[1023] == 1023);
    CHECK_THROWS_WITH_AS(catalog["bounded"](Launch{.n_threads = Dim3(1024), .block = Dim3(256)}, out.view(), 1024),
                         doctest::Contains("exceeding the 128 device/kernel limit"), LaunchError);

    std::vector<double> x = ramp(4096);
    DeviceVector<double> dx(x), dy(std::vector<double>(4096, 0.0));
    catalog["shared_copy"](Launch{.n_threads = Dim3(4096), .block = Dim3(256), .shared_mem = 100 * 1024}, dx.view(),
                           dy.view(), 4096LL);
    auto y = dy.read();
    CHECK(y[4095] == 2.0 * 4095);
    auto optin = static_cast<std::size_t>(Gpu::system()->current_device().shared_per_block_optin);
    CHECK_THROWS_WITH_AS(
        catalog["shared_copy"](Launch{.n_threads = Dim3(4096), .shared_mem = optin + 1}, dx.view(), dy.view(), 4096LL),
        doctest::Contains("bytes a block may use on this device"), LaunchError);
}

TEST_CASE("the PTX path: a cache without a cubin for this GPU is served by the driver's JIT")
{
    GpuPackage package;
    REQUIRE(package.build({"sm_80"}, true));  // sm_80 cubin + compute_80 PTX
    auto catalog = package.catalog();
    std::vector<double> y = ramp(512);
    DeviceVector<double> dy(y);
    catalog["scale"](dy.view(), 3.0, 512LL);
    auto info = catalog["scale"].load_info();
    REQUIRE(info);
    CHECK(info->how == "ptx");
    CHECK(info->target == "compute_80");
    auto result = dy.read();
    CHECK(result[511] == 3.0 * 511);
    MESSAGE(std::string("PTX load (JIT) took " + std::to_string(info->seconds * 1e3) + " ms"));
}

TEST_CASE("a miss is built with NVRTC, published, and found by the next catalog")
{
    GpuPackage package;  // empty cache
    {
        auto catalog = package.catalog();
        std::vector<double> y = ramp(100);
        DeviceVector<double> dy(y);
        catalog["scale"](dy.view(), 0.5, 100LL);
        auto info = catalog["scale"].load_info();
        REQUIRE(info);
        CHECK(info->how == "nvrtc");
        CHECK(info->published);
        CHECK(dy.read()[99] == 49.5);
        MESSAGE(std::string("NVRTC build on a miss took " + std::to_string(info->seconds * 1e3) + " ms"));
    }
    auto catalog = package.catalog();
    CHECK(catalog["scale"].compile());
    CHECK(catalog["scale"].load_info()->how == "cubin");
    GpuPackage read_only;
    auto memory = read_only.catalog(true);
    CHECK(memory["scale"].compile());
    CHECK(memory["scale"].load_info()->how == "nvrtc");
    CHECK_FALSE(memory["scale"].load_info()->published);
}

TEST_CASE("a template kernel is built, loaded and launched as the instantiation template-args names")
{
    GpuPackage package;
    package.add("axpy_t", "a, x, y, n",
                "template <typename T>\n__global__ void axpy_t(T a, const T* x, T* y, int n)\n"
                "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] += a * x[i];\n}\n");
    package.config.template_args["axpy_t"] = {"float"};
    REQUIRE(package.build({"sm_90"}, false));
    {
        auto catalog = package.catalog();
        DeviceVector<float> dx(std::vector<float>(1000, 2.0f)), dy(std::vector<float>(1000, 1.0f));
        catalog["axpy_t"](3.0f, dx.view(), dy.view(), 1000);
        auto y = dy.read();
        CHECK(y[0] == 7.0f);
        CHECK(y[999] == 7.0f);
        CHECK(catalog["axpy_t"].load_info()->how == "cubin");
    }
    // Other arguments: the runtime's NVRTC build on the miss instantiates them.
    package.config.template_args["axpy_t"] = {"double"};
    auto catalog = package.catalog();
    DeviceVector<double> dx(std::vector<double>(10, 2.0)), dy(ramp(10));
    catalog["axpy_t"](0.5, dx.view(), dy.view(), 10);
    CHECK(dy.read()[9] == 10.0);
    CHECK(catalog["axpy_t"].load_info()->how == "nvrtc");
}

TEST_CASE("launches from several threads share one module and all run")
{
    GpuPackage package;
    REQUIRE(package.build({"sm_90"}, false));
    auto catalog = package.catalog();
    auto gpu = Gpu::system();
    gpu->current_device();  // the primary context, shared by the threads below
    constexpr int threads = 8, calls = 200, n = 4096;
    std::vector<std::unique_ptr<DeviceVector<double>>> buffers;
    for (int t = 0; t < threads; ++t)
        buffers.push_back(std::make_unique<DeviceVector<double>>(std::vector<double>(n, 1.0)));
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                for (int i = 0; i < calls; ++i)
                    catalog["scale"](buffers[t]->view(), 1.0 + (i % 2), static_cast<long long>(n));
            } catch (const std::exception& error) {
                std::fprintf(stderr, "thread %d: %s\n", t, error.what());
                ++failures;
            }
        });
    for (auto& thread : pool) thread.join();
    gpu->synchronize();
    CHECK(failures == 0);
    for (int t = 0; t < threads; ++t) {
        auto values = buffers[t]->read();
        CHECK(values[0] == std::ldexp(1.0, calls / 2));
        CHECK(values[n - 1] == std::ldexp(1.0, calls / 2));
    }
}

int main(int argc, char** argv)
{
    std::string why;
    if (!Gpu::system()->available(&why)) {
        std::printf("SKIP: no usable GPU (%s)\n", why.c_str());
        return 77;
    }
    std::printf("GPU: %s (%s)\n", Gpu::system()->current_device().name.c_str(),
                Gpu::system()->current_device().arch().c_str());
    doctest::Context context(argc, argv);
    return context.run();
}
