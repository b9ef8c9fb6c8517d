// The particle code's kernels called from C++: opens the example package's
// catalog (share/examples/particles/src), runs each kernel's cached Pyccel
// version on the host (the host library `cunumpy-kernels build` links from
// Pyccel's C, called without Python: doc/host-libraries.md) and, when a GPU
// is present, its CUDA version from the same cache, and compares the results.
// The application writes no kernel of its own.
//
//   particles-app [--src DIR] [--cache-dir DIR] [--cunumpy-include-dir DIR]
//                 [--python PY] [--markers N] [--bundle FILE]
//
// With --bundle the catalog comes from a file `cunumpy-kernels bundle` wrote
// (KernelCatalog::from_bundle): the tree and the cache are not read; the
// bundle's host libraries (of the platform it was made on, doc/bundle.md)
// are the host versions compared.
//
// A kernel without a host version (not built, or not callable from C++: the
// catalog's warning says why) is named and left out of the comparison; sort,
// which has no CUDA version, falls back to its host version on the GPU path.
//
// Exit status: 0 when every kernel run on both agrees (or no GPU is present),
// 1 when a result differs, 2 on bad flags or a library error.
#include <cunumpy_kernels/error.hpp>
#include <cunumpy_kernels/gpu.hpp>
#include <cunumpy_kernels/kernel_catalog.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <numbers>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

struct Flags {
    std::filesystem::path src = PARTICLES_SRC;
    std::optional<std::filesystem::path> cache_dir;
    std::optional<std::filesystem::path> cunumpy_include_dir;
    std::optional<std::string> python;
    std::optional<std::filesystem::path> bundle;
    long long markers = 100000;
};

Flags parse(int argc, char** argv)
{
    Flags flags;
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i];
        if (i + 1 >= argc) throw ck::UsageError("flag " + flag + " needs a value");
        std::string value = argv[++i];
        if (flag == "--src") flags.src = value;
        else if (flag == "--cache-dir") flags.cache_dir = value;
        else if (flag == "--cunumpy-include-dir") flags.cunumpy_include_dir = value;
        else if (flag == "--python") flags.python = value;
        else if (flag == "--markers") flags.markers = std::stoll(value);
        else if (flag == "--bundle") flags.bundle = value;
        else throw ck::UsageError("unknown flag " + flag);
    }
    return flags;
}

// The state of one step: markers in a periodic box of length 1, and a grid.
struct State {
    explicit State(long long n) : x(n), v(n), e(n), w(n), rho(n_cells, 0.0), order(n), counts(n_cells)
    {
        std::mt19937_64 random(12345);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (long long i = 0; i < n; ++i) {
            x[i] = unit(random) * length;
            v[i] = unit(random) - 0.5;
            e[i] = std::sin(2 * std::numbers::pi * x[i]);
            w[i] = 1.0 / static_cast<double>(n);
        }
    }
    static constexpr long long n_cells = 64;
    static constexpr double length = 1.0;
    static constexpr double dt = 0.05;
    double dx() const { return length / n_cells; }
    long long n() const { return static_cast<long long>(x.size()); }

    std::vector<double> x, v, e, w, rho;
    std::vector<long long> order, counts;
};

template <typename T>
ck::ArrayView host_view(std::vector<T>& data)
{
    return ck::host_array(data.data(), {static_cast<std::int64_t>(data.size())});
}

// A device copy of a host vector, and back.
template <typename T>
struct DeviceArray {
    DeviceArray(const ck::Gpu& gpu, const std::vector<T>& host) : buffer(gpu.allocate(host.size() * sizeof(T))), size(host.size())
    {
        buffer.upload(host.data(), host.size() * sizeof(T));
    }
    ck::ArrayView view() const { return buffer.view<T>({static_cast<std::int64_t>(size)}); }
    std::vector<T> read() const
    {
        std::vector<T> host(size);
        buffer.download(host.data(), size * sizeof(T));
        return host;
    }
    ck::DeviceBuffer buffer;
    std::size_t size;
};

template <typename T>
double max_difference(const std::vector<T>& a, const std::vector<T>& b)
{
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    return worst;
}

bool report(const std::string& kernel, double difference, double tolerance)
{
    bool ok = difference <= tolerance;
    std::printf("  %-8s max |host - gpu| = %.3g (tolerance %.3g): %s\n", kernel.c_str(), difference, tolerance,
                ok ? "parity" : "DIFFERENT");
    return ok;
}

// The tree's options with the flags over them (from_package only: a bundle holds what it needs).
ck::Config tree_config(const Flags& flags)
{
    ck::Config config = ck::load_config(flags.src);
    if (flags.cache_dir) config.cache_dir = *flags.cache_dir;
    if (flags.cunumpy_include_dir) config.cunumpy_include_dir = *flags.cunumpy_include_dir;
    if (flags.python) config.python = *flags.python;
    return config;
}

ck::KernelCatalog open_catalog(const Flags& flags)
{
    ck::CatalogOptions options;
    // As the package's __init__.py: sort is not ported yet, calls go by where the arrays are.
    options.kernel.missing_cuda = ck::MissingCuda::fallback;
    options.kernel.dispatch = ck::Dispatch::arrays;
    static const std::map<std::string, std::vector<int>> outputs = {{"push", {0, 1}}, {"deposit", {2}}, {"sort", {2, 3}}};
    options.per_kernel = [base = options.kernel](const std::string& name) -> std::optional<ck::KernelOptions> {
        ck::KernelOptions kernel = base;
        if (auto it = outputs.find(name); it != outputs.end()) kernel.outputs = it->second;
        return kernel;
    };
    if (!flags.bundle) options.load.config = tree_config(flags);
    return flags.bundle ? ck::KernelCatalog::from_bundle(*flags.bundle, options)
                        : ck::KernelCatalog::from_package(flags.src / "particles" / "kernels", options);
}

// The kernels with a host version: the catalog attaches each kernel's cached
// Pyccel version ("pyccel") when the cache holds a current one it can call.
std::set<std::string> host_versions(const ck::KernelCatalog& catalog)
{
    std::set<std::string> found;
    for (const auto& name : catalog.names()) {
        auto implementations = catalog[name].implementations();
        if (std::any_of(implementations.begin(), implementations.end(),
                        [](const std::string& implementation) { return implementation != "cuda"; }))
            found.insert(name);
    }
    return found;
}

// Each kernel from the same initial state, so that host and GPU results of
// one kernel compare on their own; only the kernels with a host version.
void run_on_host(ck::KernelCatalog& catalog, const std::set<std::string>& hosted, const State& initial, State& s)
{
    if (hosted.count("push"))
        catalog["push"](host_view(s.x), host_view(s.v), host_view(s.e), State::dt, State::length, s.n());
    std::vector<double> x0 = initial.x;
    if (hosted.count("deposit"))
        catalog["deposit"](host_view(x0), host_view(s.w), host_view(s.rho), s.dx(), s.n(), State::n_cells);
    if (hosted.count("sort"))
        catalog["sort"](host_view(x0), s.dx(), host_view(s.order), host_view(s.counts), s.n(), State::n_cells);
}

// The kernels that ran on the GPU (a kernel without CUDA falls back to its
// host version, so it runs where it has one) compared with their host runs.
bool run_on_gpu(ck::KernelCatalog& catalog, const std::set<std::string>& hosted, const ck::Gpu& gpu,
                const State& initial, const State& host)
{
    DeviceArray<double> x(gpu, initial.x), v(gpu, initial.v), e(gpu, initial.e), w(gpu, initial.w);
    DeviceArray<double> rho(gpu, initial.rho), x0(gpu, initial.x);
    DeviceArray<long long> order(gpu, initial.order), counts(gpu, initial.counts);
    auto runs = [&](const char* name) { return catalog[name].has_cuda() || hosted.count(name) > 0; };
    if (runs("push")) catalog["push"](x.view(), v.view(), e.view(), State::dt, State::length, initial.n());
    if (runs("deposit"))
        catalog["deposit"](x0.view(), w.view(), rho.view(), initial.dx(), initial.n(), State::n_cells);
    if (runs("sort")) catalog["sort"](x0.view(), initial.dx(), order.view(), counts.view(), initial.n(), State::n_cells);
    gpu.synchronize();
    for (const char* name : {"push", "deposit"})
        if (auto info = catalog[name].load_info())
            std::printf("  %-8s loaded %s %s for %s in %.2f ms\n", name, info->how.c_str(), info->target.c_str(),
                        info->device.c_str(), info->seconds * 1e3);
    if (runs("sort")) {
        auto t = catalog["sort"].transfers();
        std::printf("  sort     ran on the host (not ported): %llu fallback, %llu + %llu copies, %llu bytes\n",
                    static_cast<unsigned long long>(t.fallbacks), static_cast<unsigned long long>(t.to_host),
                    static_cast<unsigned long long>(t.to_device),
                    static_cast<unsigned long long>(t.to_host_bytes + t.to_device_bytes));
    }
    auto compared = [&](const char* name) {
        if (runs(name) && hosted.count(name)) return true;
        std::printf("  %-8s not compared: it has no host version\n", name);
        return false;
    };
    bool ok = true;
    if (compared("push"))
        ok = report("push", std::max(max_difference(x.read(), host.x), max_difference(v.read(), host.v)), 1e-12) && ok;
    if (compared("deposit")) ok = report("deposit", max_difference(rho.read(), host.rho), 1e-9) && ok;
    if (compared("sort"))
        ok = report("sort",
                    std::max(max_difference(order.read(), host.order), max_difference(counts.read(), host.counts)),
                    0) &&
             ok;
    return ok;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        Flags flags = parse(argc, argv);
        ck::KernelCatalog catalog = open_catalog(flags);
        std::printf("%s\n", catalog.summary().c_str());
        for (const auto& warning : catalog.warnings()) std::printf("warning: %s\n", warning.c_str());
        catalog.check_signatures();

        State initial(flags.markers);
        State host = initial;
        std::set<std::string> hosted = host_versions(catalog);
        run_on_host(catalog, hosted, initial, host);
        if (hosted.size() == catalog.names().size()) {
            std::printf("host: %lld markers pushed, deposited and sorted (cached Pyccel versions)\n", initial.n());
        } else {
            std::string missing;
            for (const auto& name : catalog.names())
                if (!hosted.count(name)) missing += (missing.empty() ? "" : ", ") + name;
            std::printf("host: no host version of %s in the cache (`cunumpy-kernels build --only host` builds them)\n",
                        missing.c_str());
        }

        auto gpu = ck::Gpu::system();
        std::string why;
        if (!gpu->available(&why)) {
            std::printf("no GPU (%s): host kernels only\n", why.c_str());
            return 0;
        }
        std::printf("gpu: %s\n", gpu->current_device().name.c_str());
        return run_on_gpu(catalog, hosted, *gpu, initial, host) ? 0 : 1;
    } catch (const ck::Error& error) {
        std::fprintf(stderr, "particles-app: %s\n", error.what());
        return 2;
    }
}
