#include "runtime/host_implementations.hpp"

#include "cunumpy_kernels/error.hpp"

#include "runtime/selection_state.hpp"

#include <algorithm>

namespace ck {

HostImplementations::HostImplementations(HostImplementations&& other) noexcept
    : kernel_(std::move(other.kernel_)),
      plain_(std::move(other.plain_)),
      named_(std::move(other.named_)),
      cached_(std::move(other.cached_)),
      no_cached_reason_(std::move(other.no_cached_reason_)),
      warned_python_(other.warned_python_.load())
{
}

bool HostImplementations::attached_by_application() const
{
    return plain_ ||
           std::any_of(named_.begin(), named_.end(), [](const HostKernel& h) { return static_cast<bool>(h); });
}

const std::array<HostKernel, 4>& HostImplementations::choices() const
{
    return attached_by_application() ? named_ : cached_;
}

void HostImplementations::attach_plain(HostKernel host)
{
    if (attached_by_application() && !plain_)
        throw UsageError("kernel '" + kernel_ +
                         "' has named host implementations; attach the plain one by a name "
                         "(pyccel, numba, numpy or python)");
    plain_ = std::move(host);
}

void HostImplementations::attach(const std::string& implementation, HostKernel host)
{
    int index = host_implementation_index(implementation);
    if (index < 0)
        throw UsageError("kernel '" + kernel_ +
                         "': host implementation must be one of pyccel, numba, numpy, python; got '" + implementation +
                         "'");
    if (plain_)
        throw UsageError("kernel '" + kernel_ +
                         "' has a plain host kernel; attach every implementation by name instead");
    named_[static_cast<std::size_t>(index)] = std::move(host);
}

std::vector<std::string> HostImplementations::names() const
{
    if (plain_) return {"host"};
    std::vector<std::string> names;
    const auto& named = choices();
    for (std::size_t i = 0; i < named.size(); ++i)
        if (named[i]) names.emplace_back(host_implementation_names[i]);
    return names;
}

const HostKernel& HostImplementations::selected(const WarningSink& warn, std::string* name) const
{
    if (plain_) {
        if (name) *name = "host";
        return plain_;
    }
    const auto& named = choices();
    bool any = std::any_of(named.begin(), named.end(), [](const HostKernel& h) { return static_cast<bool>(h); });
    if (!any)
        throw MissingKernelError(
            "kernel '" + kernel_ + "' has no host kernel attached" +
            (no_cached_reason_.empty() ? "" : " and no Pyccel version from the cache (" + no_cached_reason_ + ")") +
            "; attach one with catalog.attach_host(\"" + kernel_ + "\", ck::host_kernel(function))");
    int chosen = selected_host_implementation();
    if (chosen >= 0) {
        const HostKernel& host = named[static_cast<std::size_t>(chosen)];
        std::string chosen_name(host_implementation_names[static_cast<std::size_t>(chosen)]);
        if (!host) {
            std::string list;
            for (const auto& n : names()) list += (list.empty() ? "" : ", ") + n;
            throw ImplementationError("kernel '" + kernel_ + "' has no '" + chosen_name + "' implementation (it has " +
                                      list + "), and the selected host implementation never falls back");
        }
        if (name) *name = chosen_name;
        return host;
    }
    for (std::size_t i = 0; i < 3; ++i)
        if (named[i]) {
            if (name) *name = std::string(host_implementation_names[i]);
            return named[i];
        }
    if (!warned_python_.exchange(true) && warn)
        warn("kernel '" + kernel_ +
             "': no compiled or NumPy implementation is attached; running the uncompiled "
             "Python version");
    if (name) *name = "python";
    return named[3];
}

}  // namespace ck
