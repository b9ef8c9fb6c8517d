// The three documented process-wide selections (the library's only global
// mutable state), read from the environment at their first use.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"

#include "runtime/selection_state.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>

namespace ck {

namespace {

std::string lower(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

std::string stripped_lower(const char* value)
{
    std::string text = value ? value : "";
    auto first = text.find_first_not_of(" \t\n\r\f\v");
    if (first == std::string::npos) return "";
    auto last = text.find_last_not_of(" \t\n\r\f\v");
    return lower(text.substr(first, last - first + 1));
}

// -1: automatic; else the index of the implementation name.
struct Selection {
    std::atomic<Backend> backend;
    std::atomic<int> host_implementation;
    std::atomic<bool> device_cuda;
};

bool system_cuda_works(std::string* why) { return Gpu::system()->available(why); }

int index_or_automatic(const std::optional<std::string>& name) { return name ? host_implementation_index(*name) : -1; }

Selection& selection()
{
    // Magic static: a throwing environment value leaves it uninitialised,
    // so every later use throws again, as an import that failed.
    static Selection state{
        backend_from_environment(std::getenv("CUNUMPY_BACKEND"), system_cuda_works),
        index_or_automatic(host_implementation_from_environment(std::getenv("CUNUMPY_HOST_KERNEL_IMPLEMENTATION"))),
        device_implementation_from_environment(std::getenv("CUNUMPY_DEVICE_KERNEL_IMPLEMENTATION")).has_value(),
    };
    return state;
}

std::string implementation_list()
{
    std::string text;
    for (auto name : host_implementation_names) text += (text.empty() ? "" : ", ") + std::string(name);
    return text;
}

void check_host_implementation(const std::optional<std::string>& name, const std::string& where)
{
    if (name && host_implementation_index(*name) < 0)
        throw UsageError(where + ": host kernel implementation must be one of " + implementation_list() +
                         " or none, got '" + *name + "'");
}

void check_device_implementation(const std::optional<std::string>& name, const std::string& where)
{
    if (name && *name != "cuda")
        throw UsageError(where + ": device kernel implementation must be 'cuda' or none, got '" + *name + "'");
}

}  // namespace

const char* to_string(Backend backend) { return backend == Backend::cuda ? "cupy" : "numpy"; }

int host_implementation_index(const std::string& name)
{
    for (std::size_t i = 0; i < host_implementation_names.size(); ++i)
        if (host_implementation_names[i] == name) return static_cast<int>(i);
    return -1;
}

Backend backend_from_environment(const char* value, const CudaProbe& cuda_works)
{
    if (!value || lower(value) != "cupy") return Backend::host;
    return cuda_works(nullptr) ? Backend::cuda : Backend::host;
}

std::optional<std::string> host_implementation_from_environment(const char* value)
{
    std::string name = stripped_lower(value);
    if (name.empty()) return std::nullopt;
    check_host_implementation(name, "CUNUMPY_HOST_KERNEL_IMPLEMENTATION");
    return name;
}

std::optional<std::string> device_implementation_from_environment(const char* value)
{
    std::string name = stripped_lower(value);
    if (name.empty()) return std::nullopt;
    check_device_implementation(name, "CUNUMPY_DEVICE_KERNEL_IMPLEMENTATION");
    return name;
}

void set_backend_with(Backend backend, bool strict, const CudaProbe& cuda_works)
{
    Selection& state = selection();
    if (backend == Backend::cuda) {
        std::string why;
        if (!cuda_works(&why)) {
            if (strict) throw CudaError("cannot select the CUDA backend: " + why);
            backend = Backend::host;
        }
    }
    state.backend.store(backend);
}

void set_backend(Backend backend, bool strict) { set_backend_with(backend, strict, system_cuda_works); }

Backend get_backend() { return selection().backend.load(std::memory_order_relaxed); }

BackendGuard::BackendGuard(Backend backend, bool strict) : previous_(get_backend()) { set_backend(backend, strict); }

BackendGuard::~BackendGuard() { selection().backend.store(previous_); }

void set_host_kernel_implementation(std::optional<std::string> name)
{
    check_host_implementation(name, "set_host_kernel_implementation");
    selection().host_implementation.store(index_or_automatic(name));
}

std::optional<std::string> get_host_kernel_implementation()
{
    int index = selection().host_implementation.load();
    if (index < 0) return std::nullopt;
    return std::string(host_implementation_names[static_cast<std::size_t>(index)]);
}

int selected_host_implementation() { return selection().host_implementation.load(std::memory_order_relaxed); }

HostImplementationGuard::HostImplementationGuard(std::optional<std::string> name)
    : previous_(get_host_kernel_implementation())
{
    set_host_kernel_implementation(std::move(name));
}

HostImplementationGuard::~HostImplementationGuard()
{
    selection().host_implementation.store(index_or_automatic(previous_));
}

void set_device_kernel_implementation(std::optional<std::string> name)
{
    check_device_implementation(name, "set_device_kernel_implementation");
    selection().device_cuda.store(name.has_value());
}

std::optional<std::string> get_device_kernel_implementation()
{
    if (selection().device_cuda.load()) return std::string("cuda");
    return std::nullopt;
}

bool cuda_explicitly_selected() { return selection().device_cuda.load(std::memory_order_relaxed); }

DeviceImplementationGuard::DeviceImplementationGuard(std::optional<std::string> name)
    : previous_(get_device_kernel_implementation())
{
    set_device_kernel_implementation(std::move(name));
}

DeviceImplementationGuard::~DeviceImplementationGuard() { selection().device_cuda.store(previous_.has_value()); }

}  // namespace ck
