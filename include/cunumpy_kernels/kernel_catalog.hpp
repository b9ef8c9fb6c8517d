// All kernels of a package under their names (the cunumpy kernels guide's
// `KernelCatalog`): a read-only mapping, built from a tree by the same walking
// rules, options and cache as the CLI.
#pragma once

#include "cunumpy_kernels/export.hpp"
#include "cunumpy_kernels/kernel.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// Options of KernelCatalog::from_package.
struct CatalogOptions {
    /// Passed to every kernel (missing_cuda, dispatch, launch defaults).
    KernelOptions kernel;
    /// Per-kernel options by name, replacing `kernel` where it returns a
    /// value (cunumpy's callable host_options).
    std::function<std::optional<KernelOptions>(const std::string& name)> per_kernel;
    /// Config, GPU access and cache policy.
    LoadOptions load;
};

class CK_API KernelCatalog {
public:
    /// An empty catalog; add kernels with add().
    KernelCatalog();

    /// Every kernel under `path` (a kernel package, one kernel folder, or any
    /// tree holding kernel packages), found with the CLI's walking rules and
    /// the options of the nearest pyproject.toml unless `options.load.config`
    /// is given. Nothing is compiled or loaded here; the CUDA sources are
    /// read to learn their signatures. Walk warnings (long names) are kept in
    /// warnings().
    ///
    /// Throws UsageError for a bad path or two kernels of one name,
    /// ConfigError for a bad pyproject.toml, SourceError for unreadable files.
    static KernelCatalog from_package(const std::filesystem::path& path, CatalogOptions options = {});

    KernelCatalog(KernelCatalog&&) noexcept;
    KernelCatalog& operator=(KernelCatalog&&) noexcept;
    ~KernelCatalog();

    /// Adds `kernel` under its name. Throws UsageError when the name is taken.
    Kernel& add(Kernel kernel);

    /// The kernel `name`. Throws UsageError naming the kernels there are.
    Kernel& operator[](const std::string& name);
    const Kernel& operator[](const std::string& name) const;
    /// Whether kernel `name` is in the catalog; how many kernels it holds.
    bool contains(const std::string& name) const;
    std::size_t size() const;
    /// The names, sorted.
    std::vector<std::string> names() const;

    /// Attaches host kernel `host` to kernel `name` (see Kernel::attach_host).
    void attach_host(const std::string& name, HostKernel host);
    void attach_host(const std::string& name, const std::string& implementation, HostKernel host);

    /// Sorted names of the kernels with and without a CUDA kernel.
    std::vector<std::string> with_cuda() const;
    std::vector<std::string> without_cuda() const;

    /// "CUDA kernels: 2 of 3 (missing: sort)", naming at most `max_missing`
    /// kernels without CUDA kernel, then "..."; no parenthesis when all are
    /// ported.
    std::string summary(std::size_t max_missing = 10) const;

    /// Compares, for every kernel with both, the parameter names of the
    /// Python host kernel with the parsed `__global__` signature. Throws
    /// SignatureError listing every kernel that differs, e.g. "kernel 'push':
    /// the host kernel takes (x, v, dt, n), the CUDA kernel (x, v, n, dt)".
    void check_signatures() const;

    /// Loads (building on a miss) every CUDA kernel for the current device,
    /// `jobs` at a time (nullopt: one per core). Every kernel is attempted;
    /// then the first error is rethrown. Returns the names loaded.
    std::vector<std::string> compile_all(std::optional<int> jobs = 1);

    /// Fallback counts summed over all kernels.
    TransferCounts transfers() const;

    /// Warnings of the walk (names over 48 characters).
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    std::map<std::string, Kernel, std::less<>> kernels_;
    std::vector<std::string> warnings_;
    std::shared_ptr<Gpu> gpu_;  ///< of from_package; nullptr: Gpu::system()
};

}  // namespace ck
