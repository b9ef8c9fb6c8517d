// What a Kernel holds, and how the catalog builds one from a kernel folder.
#pragma once

#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"

#include "runtime/host_fallback.hpp"
#include "runtime/host_implementations.hpp"

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ck {

class ArtifactCache;
class CudaKernel;

// Hidden although Kernel is exported: internal to the library.
struct [[gnu::visibility("hidden")]] Kernel::State
{
    State(std::string name_, KernelOptions options_);

    std::string name;
    KernelOptions options;
    HostImplementations host;
    WarningSink warn;                    ///< options.warn, or write_warning_line
    std::shared_ptr<CudaKernel> cuda;    ///< null: not ported
    std::filesystem::path cuda_path;     ///< where the CUDA kernel is or is expected
    std::optional<KernelSource> source;  ///< the folder it came from, for check_signatures
    Config config;                       ///< the options it was found with
    std::shared_ptr<Gpu> gpu;            ///< for fallback copies; null: Gpu::system()
    AtomicTransferCounts counts;
    std::atomic<bool> warned_fallback{false};
};

/// The kernel of `source`: CUDA side over `cache` when the folder has a CUDA
/// source; host side the cached Pyccel version when `build` made its host
/// library (cached_host.hpp), until the application attaches its own. Why a
/// host library exists but cannot serve the kernel goes to `notes`, or, when
/// null, to the kernel's warning sink.
/// The library's way to build a Kernel over prepared state (a friend of Kernel).
struct KernelFactory {
    static Kernel make(std::unique_ptr<Kernel::State> state) { return Kernel(std::move(state)); }
};

Kernel make_kernel(const KernelSource& source, KernelOptions options, const Config& config,
                   std::shared_ptr<ArtifactCache> cache, std::shared_ptr<Gpu> gpu,
                   std::vector<std::string>* notes = nullptr);

/// The warning sink of `options`, or write_warning_line.
WarningSink warning_sink(const KernelOptions& options);

}  // namespace ck
