#include "runtime/cuda_kernel.hpp"

#include "compilers/cubin_parameters.hpp"
#include "cunumpy_kernels/error.hpp"
#include "runtime/artifact_cache.hpp"
#include "runtime/cache_images.hpp"
#include "runtime/default_launch_shape.hpp"
#include "signatures/kernel_entry.hpp"
#include "runtime/gpu_state.hpp"
#include "util/elapsed.hpp"
#include "util/file_util.hpp"

#include <chrono>

namespace ck {

namespace {

std::string device_text(const DeviceInfo& info) { return info.name + " (" + info.arch() + ")"; }

int function_attribute(CudaDriver& driver, CUfunction function, CUfunction_attribute which)
{
    int value = 0;
    check_cuda(driver, driver.function_attribute(&value, which, function), "cuFuncGetAttribute");
    return value;
}

}  // namespace

CudaKernelFacts read_cuda_kernel_facts(const KernelSource& source, const Config& config, signatures::LexedTexts* lexed,
                                       signatures::DeclarationMemo* declarations)
{
    CudaKernelFacts facts{source.name, *source.cuda_file, std::nullopt, ""};
    try {
        std::string text = util::read_file(*source.cuda_file);
        // One reading for the entry and the signature: the entry build
        // compiled, a template's instantiation typed with its arguments.
        signatures::HeaderCache cache(lexed);
        auto read = [&] {
            signatures::ProjectHeaders headers = signatures::project_headers_of(source, config, &cache);
            return signatures::read_cuda_declaration(text, source.name, &headers);
        };
        auto found = declarations ? declarations->read(source, config, text, &cache) : read();
        KernelEntry entry = kernel_entry_of(source, config, signatures::reduced(found));
        facts.parameters = global_signature_of(found, source.name, *source.cuda_file, entry.template_args).parameters;
    } catch (const SourceError& error) {
        facts.signature_error = error.what();
    }
    return facts;
}

CudaKernel::CudaKernel(KernelSource source, const Config& config, std::shared_ptr<ArtifactCache> cache,
                       std::shared_ptr<Gpu> gpu, WarningSink warn)
    : CudaKernel(read_cuda_kernel_facts(source, config, cache ? &cache->lexed() : nullptr,
                                        cache ? &cache->declarations() : nullptr),
                 // A copy, not a move: arguments are evaluated in no set order,
                 // and the facts above read through the same cache.
                 std::make_unique<CacheImages>(source, cache), std::move(gpu), std::move(warn))
{
}

CudaKernel::CudaKernel(CudaKernelFacts facts, std::unique_ptr<ImageSource> images, std::shared_ptr<Gpu> gpu,
                       WarningSink warn)
    : name_(std::move(facts.name)),
      cuda_file_(std::move(facts.cuda_file)),
      images_(std::move(images)),
      gpu_(std::move(gpu)),
      warn_(std::move(warn)),
      signature_error_(std::move(facts.signature_error))
{
    if (facts.parameters) packer_.emplace(name_, std::move(*facts.parameters));
}

CudaKernel::~CudaKernel()
{
    for (auto& [context, loaded] : loaded_) {
        try {
            GpuAccess::driver(*gpu_).module_unload(loaded->module);
        } catch (const Error&) {
            // The driver is gone: so is the module.
        }
    }
}

void CudaKernel::throw_signature_error() const { throw SourceError(signature_error_); }

namespace {

// The module's parameter layout: the driver's (cuFuncGetParamInfo, CUDA
// 12.4+), else the cubin's own records (cubin_parameters.hpp); nothing when
// neither can tell (a PTX image on an older driver).
std::optional<std::vector<CubinParameter>> module_parameters(CudaDriver& driver, CUfunction function,
                                                             const ModuleImage& image, const std::string& context)
{
    std::vector<CubinParameter> found;
    for (std::size_t index = 0;; ++index) {
        std::size_t offset = 0, size = 0;
        CUresult result = driver.function_param_info(function, index, &offset, &size);
        if (result == CUDA_ERROR_NOT_SUPPORTED) break;
        if (result != CUDA_SUCCESS) return found;
        found.push_back({index, offset, size});
    }
    return read_cubin_parameters(image.bytes, image.entry_symbol, context + ": " + image.info.target);
}

}  // namespace

void CudaKernel::read_function_facts(Loaded& loaded, const ModuleImage& image)
{
    CudaDriver& driver = GpuAccess::driver(*gpu_);
    loaded.limits.max_threads_per_block =
        function_attribute(driver, loaded.function, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    loaded.limits.static_shared = function_attribute(driver, loaded.function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    loaded.dynamic_shared =
        function_attribute(driver, loaded.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);

    // The layout checks the signature reader and gives the size of every struct.
    const auto& parameters = packer().parameters();
    loaded.struct_sizes.assign(parameters.size(), 0);
    const std::string& entry_symbol = image.entry_symbol;
    auto layout = module_parameters(driver, loaded.function, image, loaded.context);
    if (!layout) return;
    if (layout->size() != parameters.size())
        throw ArtifactError(loaded.context + ": the module's entry " + entry_symbol + " takes " +
                            std::to_string(layout->size()) + " parameters, the declaration in " + cuda_file_.string() +
                            " " + std::to_string(parameters.size()) + "; rebuild the kernel (cunumpy-kernels build)");
    for (std::size_t i = 0; i < parameters.size(); ++i) {
        const KernelParameter& p = parameters[i];
        std::size_t size = (*layout)[i].size;
        if (p.kind == ParameterKind::structure)
            loaded.struct_sizes[i] = size;
        else if (p.packed_size() != size)
            throw ArtifactError(loaded.context + ": " + describe_parameter(p, i) + " takes " + std::to_string(size) +
                                " bytes in the module's entry " + entry_symbol + ", not the " +
                                std::to_string(p.packed_size()) + " its declaration in " + cuda_file_.string() +
                                " gives; rebuild the kernel (cunumpy-kernels build)");
    }
}

std::optional<std::unique_ptr<CudaKernel::Loaded>> CudaKernel::try_image(const CurrentContext& current,
                                                                         ModuleImage& image, std::string& problem)
{
    CudaDriver& driver = GpuAccess::driver(*gpu_);
    auto loaded = std::make_unique<Loaded>();
    loaded->context = "kernel '" + name_ + "' on CUDA device " + std::to_string(current.device->info.ordinal) + " (" +
                      current.device->info.name + ")";
    CUresult result = driver.module_load_data(&loaded->module, image.bytes.data());
    if (result != CUDA_SUCCESS) {
        problem = image.info.target + " (" + image.info.how + "): cuModuleLoadData: " + driver.error_text(result);
        return std::nullopt;
    }
    result = driver.module_get_function(&loaded->function, loaded->module, image.entry_symbol.c_str());
    if (result != CUDA_SUCCESS) {
        problem = image.info.target + " (" + image.info.how + "): no entry " + image.entry_symbol +
                  " in the module: " + driver.error_text(result);
        driver.module_unload(loaded->module);
        return std::nullopt;
    }
    try {
        read_function_facts(*loaded, image);
    } catch (...) {
        driver.module_unload(loaded->module);
        throw;
    }
    loaded->info = image.info;
    loaded->info.device = device_text(current.device->info);
    return loaded;
}

// Nothing held fits: an image built now (NVRTC, for the cache), or the error
// that says what is held and what to do.
std::unique_ptr<CudaKernel::Loaded> CudaKernel::load_built(const CurrentContext& current,
                                                           const std::vector<std::string>& report)
{
    const DeviceInfo& device = current.device->info;
    std::string holds = images_->holder() + " holds:";
    for (const auto& line : report) holds += "\n  " + line;
    std::string prefix = "kernel '" + name_ + "': nothing in " + images_->kind() + " fits CUDA device " +
                         std::to_string(device.ordinal) + ", " + device_text(device) + "; " + holds;
    std::optional<ModuleImage> image;
    std::string why_not;
    try {
        image = images_->build(device.cc_major, device.cc_minor, why_not);
    } catch (const Error& error) {
        throw ArtifactError(prefix + "\nand building it now failed: " + error.what());
    }
    if (!image) throw ArtifactError(prefix + "\n" + why_not);
    std::string problem;
    auto attempt = try_image(current, *image, problem);
    if (!attempt) throw ArtifactError(prefix + "\nand the NVRTC build did not load: " + problem);
    return std::move(*attempt);
}

std::unique_ptr<CudaKernel::Loaded> CudaKernel::load_module(const CurrentContext& current)
{
    auto start = std::chrono::steady_clock::now();
    const DeviceInfo& device = current.device->info;
    std::vector<std::string> report, missing;
    bool any_held = false;
    std::unique_ptr<Loaded> loaded;
    for (const auto& candidate : images_->candidates(device.cc_major, device.cc_minor, report)) {
        std::string problem;
        try {
            std::optional<ModuleImage> image = candidate.read();
            if (!image) {
                missing.push_back(candidate.target);
                continue;
            }
            any_held = true;
            if (auto attempt = try_image(current, *image, problem)) {
                loaded = std::move(*attempt);
                break;
            }
        } catch (const ArtifactError& error) {
            any_held = true;  // an entry of the current inputs, unusable: not "no entry"
            problem = error.what();
            if (warn_) warn_("kernel '" + name_ + "': " + problem);
        }
        report.push_back(problem);
    }
    if (!loaded) {
        images_->explain_missing(missing, any_held, report);
        loaded = load_built(current, report);
    }
    loaded->info.seconds = util::seconds_since(start);
    return loaded;
}

// Most processes use one context: its module is found by an atomic load,
// inlined into the launch below.
inline CudaKernel::Loaded& CudaKernel::loaded_for(const CurrentContext& current)
{
    if (Loaded* first = first_loaded_.load(std::memory_order_acquire);
        first && first_context_.load(std::memory_order_relaxed) == current.context) [[likely]]
        return *first;
    return load_for(current);
}

CudaKernel::Loaded& CudaKernel::load_for(const CurrentContext& current)
{
    {
        std::shared_lock lock(mutex_);
        auto it = loaded_.find(current.context);
        if (it != loaded_.end()) return *it->second;
    }
    std::lock_guard load_lock(load_mutex_);
    {
        std::shared_lock lock(mutex_);
        auto it = loaded_.find(current.context);
        if (it != loaded_.end()) return *it->second;
    }
    auto loaded = load_module(current);
    std::unique_lock lock(mutex_);
    Loaded& result = *loaded_.emplace(current.context, std::move(loaded)).first->second;
    if (!first_loaded_.load(std::memory_order_relaxed)) {
        first_context_.store(current.context, std::memory_order_relaxed);
        first_loaded_.store(&result, std::memory_order_release);
    }
    return result;
}

void CudaKernel::opt_in_shared(Loaded& loaded, std::size_t shared_mem)
{
    std::lock_guard lock(load_mutex_);
    if (static_cast<int>(shared_mem) <= loaded.dynamic_shared) return;
    CudaDriver& driver = GpuAccess::driver(*gpu_);
    check_cuda(driver,
               driver.function_set_attribute(loaded.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             static_cast<int>(shared_mem)),
               loaded.context + ": opting in to " + std::to_string(shared_mem) + " bytes of dynamic shared memory");
    loaded.dynamic_shared = static_cast<int>(shared_mem);
}

void CudaKernel::launch(std::span<const Argument> args, const Launch& launch, const Dim3& block_size,
                        const NThreadsFrom& n_threads_from)
{
    const ArgumentPacker& arguments = packer();
    std::optional<LaunchShape> usual = default_launch_shape(launch, block_size, n_threads_from, args);
    LaunchShape shape = usual ? *usual : launch_shape(launch, block_size, n_threads_from, args);
    if (shape.empty()) {
        arguments.check(args);
        return;
    }
    CurrentContext current = GpuAccess::state(*gpu_).current_context();
    Loaded& loaded = loaded_for(current);
    PackedArguments packed;
    arguments.pack(args, loaded.struct_sizes, packed);
    check_launch_limits(shape, launch.shared_mem, current.device->info, loaded.limits, loaded.context);
    if (static_cast<int>(launch.shared_mem) > loaded.dynamic_shared) opt_in_shared(loaded, launch.shared_mem);
    CudaDriver& driver = *GpuAccess::state(*gpu_).driver;
    CUresult result = driver.launch(loaded.function, static_cast<unsigned>(shape.grid.x),
                                    static_cast<unsigned>(shape.grid.y), static_cast<unsigned>(shape.grid.z),
                                    static_cast<unsigned>(shape.block.x), static_cast<unsigned>(shape.block.y),
                                    static_cast<unsigned>(shape.block.z), static_cast<unsigned>(launch.shared_mem),
                                    reinterpret_cast<CUstream>(launch.stream), packed.pointers());
    if (result != CUDA_SUCCESS)
        throw CudaError(loaded.context + ": cuLaunchKernel with grid " + shape.grid.to_string() + ", block " +
                        shape.block.to_string() + ": " + driver.error_text(result));
}

void CudaKernel::load()
{
    packer();
    loaded_for(GpuAccess::state(*gpu_).current_context());
}

std::optional<CudaLoadInfo> CudaKernel::load_info() const
{
    CUcontext context = nullptr;
    if (GpuAccess::driver(*gpu_).context_get_current(&context) != CUDA_SUCCESS || !context) return std::nullopt;
    std::shared_lock lock(mutex_);
    auto it = loaded_.find(context);
    if (it == loaded_.end()) return std::nullopt;
    return it->second->info;
}

}  // namespace ck
