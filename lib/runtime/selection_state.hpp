// The parsing rules of the selection environment variables and the
// process-wide selection, split out so that tests check the rules without
// changing the process's environment.
#pragma once

#include "cunumpy_kernels/selection.hpp"

#include <functional>
#include <optional>
#include <string>

namespace ck {

/// Answers whether CUDA works; on false sets the reason.
using CudaProbe = std::function<bool(std::string* why)>;

/// CUNUMPY_BACKEND's rule: lower-cased (not stripped) "cupy" asks for CUDA,
/// which `cuda_works` must confirm; anything else, or unset, is host.
Backend backend_from_environment(const char* value, const CudaProbe& cuda_works);

/// CUNUMPY_HOST_KERNEL_IMPLEMENTATION's rule: stripped and lower-cased;
/// empty or unset is automatic (nullopt). Throws UsageError naming the
/// variable for a value outside host_implementation_names.
std::optional<std::string> host_implementation_from_environment(const char* value);

/// CUNUMPY_DEVICE_KERNEL_IMPLEMENTATION's rule: likewise, "cuda" only.
std::optional<std::string> device_implementation_from_environment(const char* value);

/// set_backend with an explicit probe (the public one uses Gpu::system()).
void set_backend_with(Backend backend, bool strict, const CudaProbe& cuda_works);

/// Index of a host implementation in host_implementation_names, or -1.
int host_implementation_index(const std::string& name);

/// The host implementation selected now as an index, -1 for automatic
/// (cheap: read on every host call).
int selected_host_implementation();

/// Whether "cuda" is explicitly required for device calls (cheap).
bool cuda_explicitly_selected();

}  // namespace ck
