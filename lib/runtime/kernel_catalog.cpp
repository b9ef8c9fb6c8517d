#include "cunumpy_kernels/kernel_catalog.hpp"

#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"

#include "package/porting_summary.hpp"
#include "runtime/artifact_cache.hpp"
#include "runtime/gpu_state.hpp"
#include "runtime/kernel_state.hpp"
#include "util/job_pool.hpp"
#include "util/library_surface.hpp"

#include <exception>
#include <mutex>

namespace ck {

KernelCatalog::KernelCatalog() = default;
KernelCatalog::KernelCatalog(KernelCatalog&&) noexcept = default;
KernelCatalog& KernelCatalog::operator=(KernelCatalog&&) noexcept = default;
KernelCatalog::~KernelCatalog() = default;

KernelCatalog KernelCatalog::from_package(const std::filesystem::path& path, CatalogOptions options)
{
    return util::at_library_surface("KernelCatalog::from_package", [&] {
        Config config = options.load.config ? *options.load.config : load_config(path);
        KernelCatalog catalog;
        auto sources = find_kernels({path}, config, [&](const std::string& w) { catalog.warnings_.push_back(w); });
        std::shared_ptr<Gpu> gpu = options.load.gpu ? options.load.gpu : Gpu::system();
        catalog.gpu_ = gpu;
        std::map<std::string, std::shared_ptr<ArtifactCache>> caches;  // by cache name
        for (const auto& source : sources) {
            KernelOptions kernel_options = options.kernel;
            if (options.per_kernel)
                if (auto specific = util::run_caller_code([&] { return options.per_kernel(source.name); }))
                    kernel_options = std::move(*specific);
            std::shared_ptr<ArtifactCache> cache;
            if (source.cuda_file) {
                std::string name = cache_name_of(config, source.top_package);
                auto& slot = caches[name];
                if (!slot)
                    slot = std::make_shared<ArtifactCache>(config, name, options.load.read_only_cache,
                                                           warning_sink(kernel_options));
                cache = slot;
            }
            if (catalog.contains(source.name))
                throw UsageError("two kernels are named '" + source.name +
                                 "': " + catalog[source.name].cuda_path().parent_path().string() + " and " +
                                 source.folder.string() + "; open each package in its own catalog");
            catalog.add(
                make_kernel(source, std::move(kernel_options), config, std::move(cache), gpu, &catalog.warnings_));
        }
        return catalog;
    });
}

Kernel& KernelCatalog::add(Kernel kernel)
{
    std::string name = kernel.name();
    if (kernels_.count(name)) throw UsageError("a kernel named '" + name + "' is already in the catalog");
    return kernels_.emplace(name, std::move(kernel)).first->second;
}

Kernel& KernelCatalog::operator[](const std::string& name) { return const_cast<Kernel&>(std::as_const(*this)[name]); }

const Kernel& KernelCatalog::operator[](const std::string& name) const
{
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return it->second;
    std::string names;
    for (const auto& [n, k] : kernels_) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("no kernel '" + name + "' in the catalog (it has: " + (names.empty() ? "none" : names) + ")");
}

bool KernelCatalog::contains(const std::string& name) const { return kernels_.count(name) > 0; }
std::size_t KernelCatalog::size() const { return kernels_.size(); }

std::vector<std::string> KernelCatalog::names() const
{
    std::vector<std::string> names;
    for (const auto& [name, kernel] : kernels_) names.push_back(name);
    return names;
}

void KernelCatalog::attach_host(const std::string& name, HostKernel host)
{
    (*this)[name].attach_host(std::move(host));
}

void KernelCatalog::attach_host(const std::string& name, const std::string& implementation, HostKernel host)
{
    (*this)[name].attach_host(implementation, std::move(host));
}

std::vector<std::string> KernelCatalog::with_cuda() const
{
    std::vector<std::string> names;
    for (const auto& [name, kernel] : kernels_)
        if (kernel.has_cuda()) names.push_back(name);
    return names;
}

std::vector<std::string> KernelCatalog::without_cuda() const
{
    std::vector<std::string> names;
    for (const auto& [name, kernel] : kernels_)
        if (!kernel.has_cuda()) names.push_back(name);
    return names;
}

std::string KernelCatalog::summary(std::size_t max_missing) const
{
    return porting_summary(size(), without_cuda(), max_missing);
}

void KernelCatalog::check_signatures() const
{
    std::vector<std::string> problems;
    for (const auto& [name, kernel] : kernels_)
        for (auto& message : kernel.signature_mismatches()) problems.push_back(std::move(message));
    if (problems.empty()) return;
    std::string text = "host and CUDA kernels take different parameters:";
    for (const auto& p : problems) text += "\n  " + p;
    throw SignatureError(text);
}

std::vector<std::string> KernelCatalog::compile_all(std::optional<int> jobs)
{
    return util::at_library_surface("KernelCatalog::compile_all", [&] {
        std::vector<Kernel*> ported;
        for (auto& [name, kernel] : kernels_)
            if (kernel.has_cuda()) ported.push_back(&kernel);
        std::vector<std::exception_ptr> errors(ported.size());
        int workers = job_count(jobs);
        // Contexts are per thread: every worker loads into the caller's context.
        std::shared_ptr<Gpu> gpu = gpu_ ? gpu_ : Gpu::system();
        CUcontext context = ported.empty() ? nullptr : GpuAccess::state(*gpu).current_context().context;
        JobPool(workers).run(ported.size(), [&](std::size_t i) {
            util::SurfaceDepth inside_compile_all;  // the worker's errors are compile_all's to translate
            try {
                check_cuda(GpuAccess::driver(*gpu), GpuAccess::driver(*gpu).context_set_current(context),
                           "cuCtxSetCurrent");
                ported[i]->compile();
            } catch (...) {
                errors[i] = std::current_exception();
            }
        });
        std::vector<std::string> compiled;
        for (std::size_t i = 0; i < ported.size(); ++i) {
            if (errors[i]) std::rethrow_exception(errors[i]);
            compiled.push_back(ported[i]->name());
        }
        return compiled;
    });
}

TransferCounts KernelCatalog::transfers() const
{
    TransferCounts total;
    for (const auto& [name, kernel] : kernels_) total += kernel.transfers();
    return total;
}

}  // namespace ck
