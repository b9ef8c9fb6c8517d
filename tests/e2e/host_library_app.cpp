// An application that attaches no host kernel: it opens the example's
// catalog over a cache `build` filled and calls each kernel on host arrays,
// so the cached Pyccel versions run (test_host_library.py).
//
//   host-library-app SRC CACHE_DIR DATA_DIR
//   host-library-app --open SRC PACKAGE CACHE_DIR
//   host-library-app --grid SRC PACKAGE CACHE_DIR DATA_DIR
//   host-library-app --bundle BUNDLE DATA_DIR
//
// Reads x, v, e, w (float64, raw) from DATA_DIR, writes push_x, push_v, rho,
// order, counts there, and prints each kernel's implementations and the
// errors of calls the library must refuse. With --open it only opens the
// catalog of PACKAGE (a folder of the tree SRC) and prints its warnings and
// each kernel's implementations: what an application learns when it opens.
// With --grid it calls PACKAGE's kernel `scale(a, b, s, counts)` (an OpenMP
// test module) on views: a C-order `a[:, ::2]` of the grid_a array
// (float64, grid_rows x 2 grid_columns) and a Fortran-order grid_b (grid_rows
// x grid_columns), and writes grid_a and grid_counts back. With --bundle it
// does the main mode's work on the catalog of BUNDLE (from_bundle).
#include <cunumpy_kernels/kernel_catalog.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr double dt = 0.05;
constexpr double length = 1.0;
constexpr std::int64_t n_cells = 64;

template <typename T>
std::vector<T> read(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<T> values(bytes.size() / sizeof(T));
    std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(values.size() * sizeof(T)),
              reinterpret_cast<char*>(values.data()));
    return values;
}

template <typename T>
void write(const std::string& path, const std::vector<T>& values)
{
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
}

template <typename T>
ck::ArrayView view(std::vector<T>& values)
{
    return ck::host_array(values.data(), {static_cast<std::int64_t>(values.size())});
}

std::string joined(const std::vector<std::string>& names)
{
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
    return text;
}

// The message of a call that must fail, or "no error".
template <typename... A>
std::string refusal(ck::Kernel& kernel, const A&... args)
{
    try {
        kernel(args...);
        return "no error";
    } catch (const ck::ArgumentError& error) {
        return error.what();
    }
}

constexpr std::int64_t grid_rows = 40;
constexpr std::int64_t grid_columns = 32;

ck::KernelCatalog open_catalog(const std::string& src, const std::string& package, const std::string& cache_dir,
                               ck::MissingCuda missing_cuda = ck::MissingCuda::raise)
{
    ck::Config config = ck::load_config(src);
    config.cache_dir = cache_dir;
    ck::CatalogOptions options;
    options.kernel.missing_cuda = missing_cuda;
    options.load.config = config;
    return ck::KernelCatalog::from_package(package, options);
}

int open_only(const std::string& src, const std::string& package, const std::string& cache_dir)
{
    auto catalog = open_catalog(src, package, cache_dir);
    for (const auto& warning : catalog.warnings()) std::printf("warning: %s\n", warning.c_str());
    for (const auto& name : catalog.names())
        std::printf("%s: [%s]\n", name.c_str(), joined(catalog[name].implementations()).c_str());
    return 0;
}

int grid(const std::string& src, const std::string& package, const std::string& cache_dir, const std::string& data)
{
    auto catalog = open_catalog(src, package, cache_dir, ck::MissingCuda::fallback);
    for (const auto& warning : catalog.warnings()) std::printf("warning: %s\n", warning.c_str());
    std::printf("scale: %s\n", catalog["scale"].selected().c_str());
    auto a = read<double>(data + "/grid_a"), b = read<double>(data + "/grid_b");
    std::vector<std::int64_t> counts(2, 0);
    const std::int64_t shape[] = {grid_rows, grid_columns};
    const std::int64_t every_other_column[] = {2 * grid_columns, 2}, fortran_order[] = {1, grid_rows};
    auto a_view =
        ck::make_strided_view(a.data(), ck::ElementType::float64, shape, every_other_column, ck::Memory::host);
    auto b_view = ck::make_strided_view(b.data(), ck::ElementType::float64, shape, fortran_order, ck::Memory::host);
    catalog["scale"](a_view, b_view, 2.0, view(counts));
    write(data + "/grid_a", a);
    write(data + "/grid_counts", counts);
    return 0;
}

}  // namespace

// Calls each example kernel on the data, writes the results and prints what
// the catalog holds and the refusals (the main mode's and --bundle's work).
void run_example(ck::KernelCatalog& catalog, const std::string& data)
{
    for (const auto& warning : catalog.warnings()) std::printf("warning: %s\n", warning.c_str());
    for (const auto& name : catalog.names())
        std::printf("%s: %s selected %s\n", name.c_str(), joined(catalog[name].implementations()).c_str(),
                    catalog[name].selected().c_str());

    auto x = read<double>(data + "/x"), v = read<double>(data + "/v"), e = read<double>(data + "/e");
    auto w = read<double>(data + "/w");
    auto n = static_cast<std::int64_t>(x.size());
    std::vector<double> x0 = x;
    catalog["push"](view(x), view(v), view(e), dt, length, n);
    write(data + "/push_x", x);
    write(data + "/push_v", v);
    std::vector<double> rho(n_cells, 0.0);
    catalog["deposit"](view(x0), view(w), view(rho), length / n_cells, n, n_cells);
    write(data + "/rho", rho);
    std::vector<std::int64_t> order(x0.size()), counts(n_cells);
    catalog["sort"](view(x0), length / n_cells, view(order), view(counts), n, n_cells);
    write(data + "/order", order);
    write(data + "/counts", counts);

    std::vector<float> single(x0.size());
    std::printf("float32 x: %s\n", refusal(catalog["push"], view(single), view(v), view(e), dt, length, n).c_str());
    std::printf("float n: %s\n", refusal(catalog["push"], view(x), view(v), view(e), dt, length, 2.5).c_str());
    std::vector<double> none;
    std::printf("empty x: %s\n", refusal(catalog["push"], view(none), view(v), view(e), dt, length, n).c_str());

    bool ran_own = false;
    catalog.attach_host("push", ck::HostKernel([&](std::span<const ck::Argument>) { ran_own = true; }));
    catalog["push"](view(x), view(v), view(e), dt, length, n);
    std::printf("attached: %s selected %s ran %s\n", joined(catalog["push"].implementations()).c_str(),
                catalog["push"].selected().c_str(), ran_own ? "own" : "cached");
}

int main(int argc, char** argv)
{
    if (argc == 5 && std::string(argv[1]) == "--open") {
        try {
            return open_only(argv[2], argv[3], argv[4]);
        } catch (const ck::Error& error) {
            std::fprintf(stderr, "host-library-app: %s\n", error.what());
            return 1;
        }
    }
    if (argc == 6 && std::string(argv[1]) == "--grid") {
        try {
            return grid(argv[2], argv[3], argv[4], argv[5]);
        } catch (const ck::Error& error) {
            std::fprintf(stderr, "host-library-app: %s\n", error.what());
            return 1;
        }
    }
    bool bundle = argc == 4 && std::string(argv[1]) == "--bundle";
    if (argc != 4) {
        std::fprintf(stderr,
                     "usage: host-library-app SRC CACHE_DIR DATA_DIR | --open SRC PACKAGE CACHE_DIR | "
                     "--grid SRC PACKAGE CACHE_DIR DATA_DIR | --bundle BUNDLE DATA_DIR\n");
        return 2;
    }
    try {
        ck::CatalogOptions options;
        options.kernel.missing_cuda = ck::MissingCuda::fallback;
        if (bundle) {
            auto catalog = ck::KernelCatalog::from_bundle(argv[2], options);
            run_example(catalog, argv[3]);
            return 0;
        }
        ck::Config config = ck::load_config(argv[1]);
        config.cache_dir = argv[2];
        options.load.config = config;
        auto catalog = ck::KernelCatalog::from_package(std::string(argv[1]) + "/particles/kernels", options);
        run_example(catalog, argv[3]);
    } catch (const ck::Error& error) {
        std::fprintf(stderr, "host-library-app: %s\n", error.what());
        return 1;
    }
    return 0;
}
