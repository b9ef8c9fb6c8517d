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

namespace ck::signatures {
class LexedTexts;
class DeclarationMemo;
}  // namespace ck::signatures

namespace ck {

class ArtifactCache;
class ImageSource;
struct CurrentContext;
struct ModuleImage;

/// What a CUDA kernel is known by before anything is loaded: read from its
/// source (from_package) or from a bundle's record (from_bundle).
struct CudaKernelFacts {
    std::string name;
    std::filesystem::path cuda_file;  ///< the source, named in errors (never read after construction)
    std::optional<std::vector<KernelParameter>> parameters;  ///< nullopt: unreadable, see signature_error
    std::string signature_error;  ///< raised as SourceError at the first CUDA call when parameters are unknown
};

/// The facts of a ported kernel read from its source: the `__global__`
/// signature typed with the entry's template arguments (`config`'s
/// template-args, kernel_entry). An unreadable signature is kept in
/// signature_error. `lexed`, when given, lexes the project headers
/// (shared with the planning of the first call, ArtifactCache::lexed);
/// `declarations`, when given, keeps the reading for that planning
/// (ArtifactCache::declarations).
CudaKernelFacts read_cuda_kernel_facts(const KernelSource& source, const Config& config,
                                       signatures::LexedTexts* lexed = nullptr,
                                       signatures::DeclarationMemo* declarations = nullptr);

class CudaKernel {
public:
    /// Reads the source's `__global__` signature now (read_cuda_kernel_facts)
    /// and takes its images from `cache`.
    CudaKernel(KernelSource source, const Config& config, std::shared_ptr<ArtifactCache> cache,
               std::shared_ptr<Gpu> gpu, WarningSink warn);
    /// A kernel over known facts and any image source (a bundle's).
    CudaKernel(CudaKernelFacts facts, std::unique_ptr<ImageSource> images, std::shared_ptr<Gpu> gpu, WarningSink warn);
    ~CudaKernel();
    CudaKernel(const CudaKernel&) = delete;
    CudaKernel& operator=(const CudaKernel&) = delete;

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

    const ArgumentPacker& packer() const
    {
        if (packer_) [[likely]]
            return *packer_;
        throw_signature_error();
    }
    [[noreturn]] void throw_signature_error() const;
    /// The module of `current`'s context, loaded at its first call.
    Loaded& loaded_for(const CurrentContext& current);
    Loaded& load_for(const CurrentContext& current);  ///< loaded_for() past the first context
    std::unique_ptr<Loaded> load_module(const CurrentContext& current);
    std::unique_ptr<Loaded> load_built(const CurrentContext& current, const std::vector<std::string>& report);
    std::optional<std::unique_ptr<Loaded>> try_image(const CurrentContext& current, ModuleImage& image,
                                                     std::string& problem);
    void read_function_facts(Loaded& loaded, const ModuleImage& image);
    void opt_in_shared(Loaded& loaded, std::size_t shared_mem);

    std::string name_;
    std::filesystem::path cuda_file_;
    std::unique_ptr<ImageSource> images_;
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
