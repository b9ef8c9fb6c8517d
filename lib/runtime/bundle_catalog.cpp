// KernelCatalog::from_bundle: a catalog whose kernels come from one bundle
// file, with no walk of the tree, no source read and no cache lookup; the
// bundle's host libraries are the kernels' "pyccel" implementations.
#include "cunumpy_kernels/kernel_catalog.hpp"

#include "cunumpy_kernels/gpu.hpp"

#include "runtime/bundle_format.hpp"
#include "runtime/bundle_host.hpp"
#include "runtime/bundle_images.hpp"
#include "runtime/cuda_kernel.hpp"
#include "runtime/kernel_state.hpp"
#include "util/library_surface.hpp"

namespace ck {

namespace {

Kernel bundle_kernel(const std::shared_ptr<const Bundle>& bundle, std::size_t index, KernelOptions options,
                     const std::shared_ptr<Gpu>& gpu, std::vector<std::string>& warnings)
{
    const BundleKernel& k = bundle->catalog.kernels[index];
    auto state = std::make_unique<Kernel::State>(k.name, std::move(options));
    state->gpu = gpu;
    state->cuda_path = k.cuda_path;
    if (k.cuda) {
        CudaKernelFacts facts{k.name, k.cuda_path, k.parameters, k.signature_error};
        state->cuda = std::make_shared<CudaKernel>(std::move(facts), std::make_unique<BundleImages>(bundle, index), gpu,
                                                   state->warn);
    }
    std::string note;
    if (auto host = bundle_host_kernel(*bundle, k, &note)) {
        state->host.attach_cached(std::move(*host));
    } else if (!note.empty()) {
        state->host.set_no_cached_reason(note);
        warnings.push_back("kernel '" + k.name + "': the bundle's Pyccel version is not attached: " + note);
    }
    return KernelFactory::make(std::move(state));
}

}  // namespace

KernelCatalog KernelCatalog::from_bundle(const std::filesystem::path& file, CatalogOptions options)
{
    return util::at_library_surface("KernelCatalog::from_bundle", [&] {
        auto bundle = std::make_shared<const Bundle>(read_bundle(file));
        KernelCatalog catalog;
        catalog.gpu_ = options.load.gpu ? options.load.gpu : Gpu::system();
        for (std::size_t i = 0; i < bundle->catalog.kernels.size(); ++i) {
            const std::string& name = bundle->catalog.kernels[i].name;
            KernelOptions kernel_options = options.kernel;
            if (options.per_kernel)
                if (auto specific = util::run_caller_code([&] { return options.per_kernel(name); }))
                    kernel_options = std::move(*specific);
            if (catalog.contains(name))
                throw ArtifactError(file.string() + ": corrupt header: two kernels are named '" + name +
                                    "'; make the bundle again (cunumpy-kernels bundle)");
            catalog.add(bundle_kernel(bundle, i, std::move(kernel_options), catalog.gpu_, catalog.warnings_));
        }
        return catalog;
    });
}

}  // namespace ck
