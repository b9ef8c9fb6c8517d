// A kernel's CUDA side: its parsed signature, the module loaded once per
// context (shared by all threads), and the checked launch.
#pragma once

#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel.hpp"
#include "cunumpy_kernels/package.hpp"

#include "runtime/argument_packer.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/launch_limits.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace ck {

class ArtifactCache;
struct CurrentContext;
struct ModuleImage;

class CudaKernel {
public:
    /// Reads the source's `__global__` signature now; a signature that
    /// cannot be read is kept as an error raised at the first CUDA call.
    /// `config` gives the entry's template arguments (kernel_entry).
    CudaKernel(KernelSource source, const Config& config, std::shared_ptr<ArtifactCache> cache, std::shared_ptr<Gpu> gpu,
               WarningSink warn);
    ~CudaKernel();
    CudaKernel(const CudaKernel&) = delete;
    CudaKernel& operator=(const CudaKernel&) = delete;

    const KernelSource& source() const { return source_; }

    /// The parameters; throws the SourceError of an unreadable signature.
    const std::vector<KernelParameter>& parameters() const { return packer().parameters(); }

    /// Checks and launches (see Kernel::call).
    void launch(std::span<const Argument> args, const Launch& launch, const Dim3& block_size,
                const NThreadsFrom& n_threads_from);

    /// Loads the module of the current context now.
    void load();

    /// How the current context's module was loaded, if it was.
    std::optional<CudaLoadInfo> load_info() const;

private:
    struct Loaded {
        CUmodule module = nullptr;
        CUfunction function = nullptr;
        FunctionLimits limits;
        std::vector<std::size_t> struct_sizes;  ///< per parameter: the driver's size for structs, else 0
        std::atomic<int> dynamic_shared{0};     ///< the opt-in set so far (bytes)
        std::string context;                    ///< "kernel 'push' on CUDA device 0 (NVIDIA H200)"
        CudaLoadInfo info;
    };

    const ArgumentPacker& packer() const;
    Loaded& loaded_for(const CurrentContext& current);
    std::unique_ptr<Loaded> load_module(const CurrentContext& current);
    std::optional<std::unique_ptr<Loaded>> try_image(const CurrentContext& current, ModuleImage& image,
                                                     std::string& problem);
    void read_function_facts(Loaded& loaded, const std::string& entry_symbol);
    void opt_in_shared(Loaded& loaded, std::size_t shared_mem);

    KernelSource source_;
    std::shared_ptr<ArtifactCache> cache_;
    std::shared_ptr<Gpu> gpu_;
    WarningSink warn_;
    std::optional<ArgumentPacker> packer_;
    std::string signature_error_;
    mutable std::shared_mutex mutex_;  ///< guards loaded_
    std::mutex load_mutex_;            ///< one load at a time
    std::map<CUcontext, std::unique_ptr<Loaded>> loaded_;
    // Most processes use one context: its module is found without a lock.
    // Set once, with release order, after the module is in loaded_; never
    // cleared before destruction.
    std::atomic<CUcontext> first_context_{nullptr};
    std::atomic<Loaded*> first_loaded_{nullptr};
};

}  // namespace ck
