// A kernel's host side: one plain host kernel (no choice applies), or named
// implementations chosen as cunumpy's HostImplementations chooses them, or,
// when the application attaches none, the cached Pyccel version as "pyccel".
#pragma once

#include "cunumpy_kernels/kernel.hpp"

#include <array>
#include <atomic>
#include <string>
#include <vector>

namespace ck {

class HostImplementations {
public:
    explicit HostImplementations(std::string kernel) : kernel_(std::move(kernel)) {}
    HostImplementations(HostImplementations&& other) noexcept;

    /// Throws UsageError when named implementations are attached.
    void attach_plain(HostKernel host);
    /// Throws UsageError for a name outside host_implementation_names or when
    /// a plain host kernel is attached.
    void attach(const std::string& implementation, HostKernel host);

    /// The kernel's Pyccel version from the cache (cached_host.hpp): it is
    /// "pyccel" while the application attaches no host kernel of its own,
    /// and set aside as soon as it does (its kernel wins).
    void attach_cached(HostKernel host) { cached_[0] = std::move(host); }
    /// Why the kernel has no cached Pyccel version (not built, its source
    /// changed, a damaged entry): told by the error of a call that finds no
    /// host kernel at all.
    void set_no_cached_reason(std::string reason) { no_cached_reason_ = std::move(reason); }

    /// "host", or the attached names in preference order, else "pyccel" for
    /// a cached version; empty when none.
    std::vector<std::string> names() const;

    /// The kernel a host call runs now and its name: the plain one; else the
    /// selected implementation (ImplementationError when missing); else the
    /// first of pyccel, numba, numpy; else python, with `warn` called once.
    /// Throws MissingKernelError when nothing is attached.
    const HostKernel& selected(const WarningSink& warn, std::string* name = nullptr) const;

private:
    bool attached_by_application() const;
    /// named_, or cached_ when the application attached nothing.
    const std::array<HostKernel, 4>& choices() const;

    std::string kernel_;
    HostKernel plain_;
    std::array<HostKernel, 4> named_;   ///< indexed as host_implementation_names
    std::array<HostKernel, 4> cached_;  ///< the cached pyccel version alone, at 0
    std::string no_cached_reason_;
    mutable std::atomic<bool> warned_python_{false};
};

}  // namespace ck
