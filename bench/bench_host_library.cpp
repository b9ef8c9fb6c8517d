// A kernel's Pyccel host version called through the catalog (its "pyccel"
// implementation: the host library's shim, doc/host-libraries.md) against a
// direct C call of the function Pyccel generated, on the example's push with
// 1,000 markers (issue 42's goal: at most 1.1x) and with 1 (the per-call
// overhead). Builds the example's host
// modules with the tool into a temporary cache first (Pyccel in CK_PYTHON,
// gcc); the direct call links that build's own object (`push_kernels.o`,
// Pyccel's support objects, STC) into a library that exports it.
#include "cunumpy_kernels/kernel_catalog.hpp"

#include "host/host_library.hpp"
#include "util/dynamic_library.hpp"
#include "util/subprocess.hpp"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr double dt = 0.05;
constexpr double length = 1.0;

// Pyccel 2.2.3's `array_double_1d` (an STC cspan: data, shape, strides in
// elements, with STC's 32-bit index), passed by value as C passes it.
struct Span1d {
    double* data;
    std::int32_t shape[1];
    struct {
        std::int32_t d[1];
    } stride;
};
using PyccelPush = void (*)(Span1d, Span1d, Span1d, double, double, std::int64_t);

void run(const std::vector<std::string>& argv)
{
    auto result = ck::util::run_process(argv);
    if (result.exit_code != 0) throw std::runtime_error(argv.front() + " failed: " + result.output);
}

// The example's host modules built into `root`/cache; returns the folder
// holding push's build (its library and `__pyccel__/`).
fs::path build_example(const fs::path& root)
{
    fs::copy(fs::path(CK_SOURCE_ROOT) / "share/examples/particles/src", root / "src", fs::copy_options::recursive);
    run({CK_TOOL, "-q", "build", "--only", "host", "--python", CK_PYTHON, "--cache-dir", (root / "cache").string(),
         (root / "src").string()});
    for (const auto& entry : fs::recursive_directory_iterator(root / "cache" / "host"))
        if (entry.path().filename() == "push_kernels.ck-host.so") return entry.path().parent_path();
    throw std::runtime_error("the build left no push_kernels.ck-host.so");
}

// Pyccel's object of push and its support objects, linked with STC and
// every symbol exported.
fs::path link_direct(const fs::path& build, const fs::path& root)
{
    std::string why;
    auto stc = ck::find_stc(CK_PYTHON, "GNU", &why);
    if (!stc) throw std::runtime_error(why);
    std::vector<std::string> link = {"gcc", "-shared", "-o", (root / "direct.so").string(),
                                     (build / "__pyccel__" / "push_kernels.o").string()};
    for (const auto& entry : fs::recursive_directory_iterator(build / "__pyccel__"))
        if (entry.path().extension() == ".o" && entry.path().parent_path() != build / "__pyccel__" &&
            entry.path().parent_path().filename() != "cwrapper")
            link.push_back(entry.path().string());
    link.insert(link.end(), {stc->library.string(), "-lm"});
    run(link);
    return root / "direct.so";
}

struct Setup {
    fs::path root = fs::temp_directory_path() / ("ck-bench-host-" + std::to_string(::getpid()));
    std::optional<ck::KernelCatalog> catalog;
    ck::util::DynamicLibrary direct;
    PyccelPush push = nullptr;

    Setup()
    {
        fs::create_directories(root);
        fs::path build = build_example(root);
        std::string error;
        direct = ck::util::DynamicLibrary::open_first({link_direct(build, root).string()}, &error);
        push = reinterpret_cast<PyccelPush>(direct.symbol("push_kernels__push"));
        if (!push) throw std::runtime_error("no push_kernels__push: " + error);
        ck::Config config = ck::load_config(root / "src");
        config.cache_dir = root / "cache";
        ck::CatalogOptions options;
        options.load.config = config;
        catalog = ck::KernelCatalog::from_package(root / "src" / "particles" / "kernels", options);
        if ((*catalog)["push"].selected() != "pyccel") throw std::runtime_error("push is not served by its library");
    }
    ~Setup()
    {
        std::error_code ignored;
        fs::remove_all(root, ignored);
    }
};

Setup& setup()
{
    static Setup instance;
    return instance;
}

// No field: the velocities stay as they are, so every call does the same
// work (a growing velocity would make fmod slower call after call).
struct Markers {
    explicit Markers(std::int64_t count) : n(count), x(count), v(count, 0.1), e(count, 0.0)
    {
        for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = length * i / n;
    }
    std::int64_t n;
    std::vector<double> x, v, e;
};

Span1d span(std::vector<double>& values) { return {values.data(), {static_cast<std::int32_t>(values.size())}, {{1}}}; }

ck::ArrayView view(std::vector<double>& values)
{
    return ck::host_array(values.data(), {static_cast<std::int64_t>(values.size())});
}

void BM_PyccelDirect(benchmark::State& state)
{
    PyccelPush push = setup().push;
    Markers m(state.range(0));
    for (auto _ : state) {
        push(span(m.x), span(m.v), span(m.e), dt, length, m.n);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_PyccelDirect)->Arg(1)->Arg(1000);

void BM_CatalogPyccel(benchmark::State& state)
{
    ck::Kernel& push = (*setup().catalog)["push"];
    Markers m(state.range(0));
    for (auto _ : state) {
        push(view(m.x), view(m.v), view(m.e), dt, length, m.n);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(BM_CatalogPyccel)->Arg(1)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
