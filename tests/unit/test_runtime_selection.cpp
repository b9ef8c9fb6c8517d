// Backend and implementation selection: cunumpy's environment rules, setters,
// getters and scoped guards.
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/selection.hpp"

#include "runtime/selection_state.hpp"

#include <doctest/doctest.h>

using namespace ck;

namespace {

bool works(std::string*) { return true; }

bool broken(std::string* why)
{
    if (why) *why = "no CUDA driver (test)";
    return false;
}

}  // namespace

TEST_CASE("CUNUMPY_BACKEND: lower-cased 'cupy' asks for CUDA, anything else is host")
{
    CHECK(backend_from_environment(nullptr, works) == Backend::host);
    CHECK(backend_from_environment("", works) == Backend::host);
    CHECK(backend_from_environment("numpy", works) == Backend::host);
    CHECK(backend_from_environment("cupy", works) == Backend::cuda);
    CHECK(backend_from_environment("CuPy", works) == Backend::cuda);
    // cunumpy lower-cases but does not strip, and ignores unknown values.
    CHECK(backend_from_environment(" cupy", works) == Backend::host);
    CHECK(backend_from_environment("cuda", works) == Backend::host);
    // Without a working CUDA the request falls back to host silently.
    CHECK(backend_from_environment("cupy", broken) == Backend::host);
}

TEST_CASE("CUNUMPY_HOST_KERNEL_IMPLEMENTATION: stripped, lower-cased, strict")
{
    CHECK_FALSE(host_implementation_from_environment(nullptr));
    CHECK_FALSE(host_implementation_from_environment(""));
    CHECK_FALSE(host_implementation_from_environment("   "));
    CHECK(host_implementation_from_environment(" NumPy\n") == std::optional<std::string>("numpy"));
    for (auto name : host_implementation_names)
        CHECK(host_implementation_from_environment(std::string(name).c_str()) ==
              std::optional<std::string>(std::string(name)));
    try {
        host_implementation_from_environment("fortran");
        FAIL("an unknown implementation must throw");
    } catch (const UsageError& error) {
        std::string message = error.what();
        CHECK(message.find("CUNUMPY_HOST_KERNEL_IMPLEMENTATION") != std::string::npos);
        CHECK(message.find("'fortran'") != std::string::npos);
    }
}

TEST_CASE("CUNUMPY_DEVICE_KERNEL_IMPLEMENTATION: 'cuda' or empty, stripped and case-insensitive")
{
    CHECK_FALSE(device_implementation_from_environment(nullptr));
    CHECK_FALSE(device_implementation_from_environment(" "));
    CHECK(device_implementation_from_environment(" CUDA ") == std::optional<std::string>("cuda"));
    CHECK_THROWS_AS(device_implementation_from_environment("hip"), UsageError);
    CHECK_THROWS_WITH_AS(device_implementation_from_environment("metal"),
                         doctest::Contains("CUNUMPY_DEVICE_KERNEL_IMPLEMENTATION"), UsageError);
}

TEST_CASE("set_backend falls back to host without CUDA unless strict; the guard restores")
{
    Backend before = get_backend();
    set_backend_with(Backend::cuda, false, broken);
    CHECK(get_backend() == Backend::host);
    set_backend_with(Backend::cuda, false, works);
    CHECK(get_backend() == Backend::cuda);
    // strict keeps the current backend and says why
    set_backend_with(Backend::host, false, works);
    CHECK_THROWS_WITH_AS(set_backend_with(Backend::cuda, true, broken), doctest::Contains("no CUDA driver (test)"),
                         CudaError);
    CHECK(get_backend() == Backend::host);
    {
        BackendGuard guard(Backend::host);
        CHECK(get_backend() == Backend::host);
    }
    set_backend_with(before, false, works);
    CHECK(std::string(to_string(Backend::cuda)) == "cupy");
    CHECK(std::string(to_string(Backend::host)) == "numpy");
}

TEST_CASE("the backend guard restores the previous backend, also on an exception")
{
    set_backend_with(Backend::cuda, false, works);
    try {
        BackendGuard guard(Backend::host);
        CHECK(get_backend() == Backend::host);
        throw std::runtime_error("leaving the scope");
    } catch (const std::runtime_error&) {
    }
    CHECK(get_backend() == Backend::cuda);
    set_backend_with(Backend::host, false, works);
}

TEST_CASE("host implementation: setter validates exactly, guard restores, getter reports the request")
{
    REQUIRE_FALSE(get_host_kernel_implementation());
    set_host_kernel_implementation("numba");
    CHECK(get_host_kernel_implementation() == std::optional<std::string>("numba"));
    CHECK(selected_host_implementation() == 1);
    // The setter keeps the previous choice on a bad value (and is case-sensitive, as cunumpy's).
    CHECK_THROWS_AS(set_host_kernel_implementation("NumPy"), UsageError);
    CHECK(get_host_kernel_implementation() == std::optional<std::string>("numba"));
    {
        HostImplementationGuard guard("numpy");
        CHECK(get_host_kernel_implementation() == std::optional<std::string>("numpy"));
        {
            HostImplementationGuard automatic(std::nullopt);
            CHECK_FALSE(get_host_kernel_implementation());
        }
        CHECK(get_host_kernel_implementation() == std::optional<std::string>("numpy"));
    }
    CHECK(get_host_kernel_implementation() == std::optional<std::string>("numba"));
    set_host_kernel_implementation(std::nullopt);
    CHECK_FALSE(get_host_kernel_implementation());
    CHECK(selected_host_implementation() == -1);
}

TEST_CASE("device implementation: only 'cuda', getter reports nullopt in automatic mode")
{
    REQUIRE_FALSE(get_device_kernel_implementation());
    CHECK_FALSE(cuda_explicitly_selected());
    set_device_kernel_implementation("cuda");
    CHECK(get_device_kernel_implementation() == std::optional<std::string>("cuda"));
    CHECK(cuda_explicitly_selected());
    CHECK_THROWS_AS(set_device_kernel_implementation("CUDA"), UsageError);
    CHECK(get_device_kernel_implementation() == std::optional<std::string>("cuda"));
    {
        DeviceImplementationGuard guard(std::nullopt);
        CHECK_FALSE(cuda_explicitly_selected());
    }
    CHECK(cuda_explicitly_selected());
    set_device_kernel_implementation(std::nullopt);
    CHECK_FALSE(get_device_kernel_implementation());
}
