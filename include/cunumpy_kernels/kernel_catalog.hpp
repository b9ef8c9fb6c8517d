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

/// Options of KernelCatalog::from_package (and from_bundle, which uses
/// `kernel`, `per_kernel` and `load.gpu` only).
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
    /// is given. Nothing is compiled here and no CUDA module is loaded; the
    /// CUDA sources are read to learn their signatures. Each kernel whose
    /// current Pyccel module `build` made a host library of (either Pyccel
    /// backend; in the cache or beside the module with `build --in-place`)
    /// gets it as its "pyccel" implementation (Kernel::from_folder). Walk
    /// warnings (long names) and the kernels a host library cannot serve,
    /// with the reason, are kept in warnings().
    ///
    /// Throws UsageError for a bad path or two kernels of one name,
    /// ConfigError for a bad pyproject.toml, SourceError for unreadable files.
    static KernelCatalog from_package(const std::filesystem::path& path, CatalogOptions options = {});

    /// Every kernel of the bundle `file` that `cunumpy-kernels bundle` wrote
    /// (format: lib/runtime/bundle_format.hpp, README "Bundles"), for jobs
    /// whose ranks must not each walk a tree: opening costs one open and one
    /// read of `file`, whatever the number of kernels. Nothing else is read:
    /// no source, header, pyproject.toml or cache; `options.load.config` and
    /// `options.load.read_only_cache` are not used (the bundle holds every
    /// kernel's parameter list and artifacts). The kernels behave as
    /// from_package's (attach_host, dispatch, fallback, argument checks
    /// against the stored parameters), but host_parameters() is nullopt and
    /// signature_mismatches() empty (no source to read).
    ///
    /// At a kernel's first CUDA load the best artifact for the device is
    /// taken as from the cache (its cubin, a compatible cubin of the same
    /// major and a lower minor, then the newest PTX not newer than the
    /// device), checked first as `build` checks what it publishes: its
    /// SHA-256, then the cubin's architecture and entry symbol (the PTX's
    /// .target and .entry), that the file is whole, and that the header
    /// files it under its own kernel and target. One that fails is never
    /// loaded (the next candidate is tried, with a warning naming
    /// "<file>#<kernel>@<target>" and the check). A bundle is never compiled
    /// from: when nothing fits, the call throws ArtifactError naming the
    /// bundle, the kernel, the device and the targets the bundle holds, or
    /// each artifact refused and that the bundle must be made again.
    /// load_info() says how = "bundle cubin" (or "bundle compatible cubin",
    /// "bundle ptx"), and artifact = "<file>#<kernel>@<target>".
    ///
    /// A kernel whose Pyccel host library the bundle carries, for this
    /// machine's platform, gets it as its "pyccel" implementation (loaded
    /// from memory, its SHA-256 checked); a kernel without one (none bundled,
    /// another platform, a library that does not load) is named in
    /// warnings(), and keeps what the application attaches.
    ///
    /// The bundle is not compared with the tree: `cunumpy-kernels status
    /// --bundle FILE` says whether it is stale.
    ///
    /// Throws ArtifactError naming `file` when it cannot be read, is not a
    /// bundle, was written in a format version this library does not read
    /// (it reads 1 and 2), or is truncated or corrupt (its header checksum
    /// differs). Throws TransientReadError when the read kept failing with
    /// "Stale file handle" (another node rewrote the bundle on a network
    /// file system; tried 5 times over about 0.15 s): load it again. A bundle
    /// whose read was torn by a rewrite (checksum fails, the path names a new
    /// file) is read once more before anything is thrown.
    static KernelCatalog from_bundle(const std::filesystem::path& file, CatalogOptions options = {});

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

    /// cunumpy's check_signatures: compares, for every kernel, the parameter
    /// names of the Python host kernel with its `__global__` signature, its
    /// other host versions and its Pyccel stub (Kernel::signature_mismatches,
    /// the CLI's check-signatures implementation). Throws SignatureError
    /// listing every difference, e.g. "kernel 'push': the host kernel takes
    /// (x, v, dt, n), the CUDA kernel (x, v, n, dt)". Declarations that cannot
    /// be read are not reported here (`cunumpy-kernels check-signatures` does).
    void check_signatures() const;

    /// Loads (building on a miss) every CUDA kernel for the current device,
    /// `jobs` at a time (nullopt: one per core). Every kernel is attempted;
    /// then the first error is rethrown. Returns the names loaded.
    std::vector<std::string> compile_all(std::optional<int> jobs = 1);

    /// Fallback counts summed over all kernels.
    TransferCounts transfers() const;

    /// Warnings of the walk (names over 48 characters), and one per kernel
    /// whose Pyccel version from the cache or the bundle is not attached
    /// though there is one (not callable from C++, a damaged, truncated or
    /// mismatching library, another platform's), with why and what to run.
    /// A kernel with no build at all, or whose source changed since, is no
    /// warning (the application may attach its own host kernel): a call
    /// that finds no host kernel says so in its MissingKernelError.
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    std::map<std::string, Kernel, std::less<>> kernels_;
    std::vector<std::string> warnings_;
    std::shared_ptr<Gpu> gpu_;  ///< of from_package or from_bundle; nullptr: Gpu::system()
};

}  // namespace ck
