// One MPI rank's start, as bench/rank_start.sh measures it: open the catalog
// of a kernel tree (from the cache `build` filled) or of a bundle, then load
// every CUDA kernel into the current device's context. Prints one JSON line:
//   {"mode":"cache","kernels":18,"context_ms":..,"open_ms":..,"load_ms":..,"total_ms":..}
// total_ms is open_ms + load_ms: the CUDA context is made first and timed
// apart (context_ms), as an application's start makes it whatever it loads.
// Run it under `strace -c -f` for the file operations, or 64 at once for the
// start time of a job.
//
//   rank-start --tree DIR [--cache-dir DIR] [--cunumpy-include-dir DIR]
//   rank-start --bundle FILE
//   ... [--barrier DIR --ranks N]   start the catalog once N ranks have a context
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel_catalog.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>
#include <optional>
#include <string>

namespace {

struct Flags {
    std::optional<std::filesystem::path> tree, bundle, cache_dir, cunumpy_include_dir, barrier;
    int ranks = 1;
};

Flags parse(int argc, char** argv)
{
    Flags flags;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string flag = argv[i];
        std::filesystem::path value = argv[i + 1];
        if (flag == "--tree")
            flags.tree = value;
        else if (flag == "--bundle")
            flags.bundle = value;
        else if (flag == "--cache-dir")
            flags.cache_dir = value;
        else if (flag == "--cunumpy-include-dir")
            flags.cunumpy_include_dir = value;
        else if (flag == "--barrier")
            flags.barrier = value;
        else if (flag == "--ranks")
            flags.ranks = std::stoi(value.string());
        else
            throw ck::UsageError("unknown flag " + flag);
    }
    if (!flags.tree == !flags.bundle) throw ck::UsageError("give --tree DIR or --bundle FILE");
    return flags;
}

ck::KernelCatalog open_catalog(const Flags& flags)
{
    if (flags.bundle) return ck::KernelCatalog::from_bundle(*flags.bundle);
    ck::Config config = ck::load_config(*flags.tree);
    if (flags.cache_dir) config.cache_dir = *flags.cache_dir;
    if (flags.cunumpy_include_dir) config.cunumpy_include_dir = *flags.cunumpy_include_dir;
    ck::CatalogOptions options;
    options.load.config = config;
    options.load.read_only_cache = true;  // a rank reads; it records no use
    return ck::KernelCatalog::from_package(*flags.tree, options);
}

// The ranks of a job start their catalogs together, as after MPI_Init: each
// leaves a file in `folder` once its context exists, then waits for all.
void wait_for_all(const std::filesystem::path& folder, int ranks)
{
    std::filesystem::create_directories(folder);
    std::ofstream(folder / std::to_string(::getpid())).put('\n');
    auto count = [&] {
        auto entries = std::filesystem::directory_iterator(folder);
        return std::distance(begin(entries), end(entries));
    };
    while (count() < ranks) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

double ms_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        Flags flags = parse(argc, argv);
        auto begin = std::chrono::steady_clock::now();
        auto gpu = ck::Gpu::system();
        std::string why;
        if (!gpu->available(&why)) throw ck::UsageError("no GPU: " + why);
        gpu->synchronize();  // the context, which the driver creates one process at a time, is not the catalog's
        double context_ms = ms_since(begin);
        if (flags.barrier) wait_for_all(*flags.barrier, flags.ranks);
        auto start = std::chrono::steady_clock::now();
        ck::KernelCatalog catalog = open_catalog(flags);
        double open_ms = ms_since(start);
        auto loading = std::chrono::steady_clock::now();
        auto loaded = catalog.compile_all(1);
        double load_ms = ms_since(loading);
        std::printf(
            "{\"mode\":\"%s\",\"kernels\":%zu,\"context_ms\":%.3f,\"open_ms\":%.3f,\"load_ms\":%.3f,"
            "\"total_ms\":%.3f}\n",
            flags.bundle ? "bundle" : "cache", loaded.size(), context_ms, open_ms, load_ms, ms_since(start));
        return 0;
    } catch (const ck::Error& error) {
        std::fprintf(stderr, "rank-start: %s\n", error.what());
        return 1;
    }
}
