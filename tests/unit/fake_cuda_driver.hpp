// A CUDA driver for tests without a GPU: devices with chosen compute
// capabilities and limits, "device memory" in host memory (so copies are
// real), modules and functions with chosen facts, and launches that are
// recorded and may run a C++ stand-in of the kernel.
#pragma once

#include "runtime/cuda_driver.hpp"

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ck::test {

struct FakeDevice {
    std::string name = "Fake H200";
    int cc_major = 9;
    int cc_minor = 0;
    int max_threads_per_block = 1024;
    int max_block[3] = {1024, 1024, 64};
    int max_grid[3] = {2147483647, 65535, 65535};
    int shared_per_block = 48 * 1024;
    int shared_per_block_optin = 227 * 1024;
};

/// Facts of a function, by entry symbol.
struct FakeFunction {
    int max_threads_per_block = 1024;
    int static_shared = 0;
    int max_dynamic_shared = 48 * 1024;
    /// Parameter sizes cuFuncGetParamInfo reports; nullopt: NOT_SUPPORTED.
    std::optional<std::vector<std::size_t>> param_sizes;
};

struct FakeLaunch {
    std::string symbol;
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_mem;
    CUstream stream;
    std::vector<std::string> params;  ///< each parameter's bytes (sizes from param_sizes; else 8)
    CUcontext context;
};

class FakeCudaDriver : public CudaDriver {
public:
    std::vector<FakeDevice> devices = {FakeDevice{}};
    std::map<std::string, FakeFunction> functions;  ///< facts by symbol; missing: defaults
    std::set<std::string> missing_symbols;          ///< cuModuleGetFunction fails for these
    bool fail_copies_to_host = false;               ///< cuMemcpyDtoH fails
    /// Called on every module load with the image; a non-success result fails it.
    std::function<CUresult(const void* image)> on_load;
    /// Runs a stand-in of the kernel on "device" memory at each launch.
    std::map<std::string, std::function<void(const FakeLaunch&)>> on_launch;
    CUresult init_result = CUDA_SUCCESS;

    std::atomic<int> loads{0};
    std::atomic<int> synchronizations{0};
    std::vector<std::string> loaded_images;  ///< "ELF" or "PTX" per successful load

    FakeCudaDriver() { current() = nullptr; }

    std::vector<FakeLaunch> launches() const
    {
        std::lock_guard lock(mutex_);
        return launches_;
    }

    /// The module-load kinds so far.
    std::vector<std::string> images() const
    {
        std::lock_guard lock(mutex_);
        return loaded_images;
    }

    CUresult init() override { return init_result; }
    CUresult driver_version(int* version) override
    {
        *version = 13000;
        return CUDA_SUCCESS;
    }
    CUresult device_count(int* count) override
    {
        *count = static_cast<int>(devices.size());
        return CUDA_SUCCESS;
    }
    CUresult device_get(CUdevice* device, int ordinal) override
    {
        if (ordinal < 0 || ordinal >= static_cast<int>(devices.size())) return CUDA_ERROR_INVALID_DEVICE;
        *device = ordinal;
        return CUDA_SUCCESS;
    }
    CUresult device_attribute(int* value, CUdevice_attribute attribute, CUdevice device) override
    {
        const FakeDevice& d = devices.at(static_cast<std::size_t>(device));
        switch (attribute) {
            case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
                *value = d.cc_major;
                break;
            case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
                *value = d.cc_minor;
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
                *value = d.max_threads_per_block;
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
                *value = d.max_block[0];
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
                *value = d.max_block[1];
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
                *value = d.max_block[2];
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
                *value = d.max_grid[0];
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
                *value = d.max_grid[1];
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
                *value = d.max_grid[2];
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
                *value = d.shared_per_block;
                break;
            case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
                *value = d.shared_per_block_optin;
                break;
            default:
                return CUDA_ERROR_INVALID_VALUE;
        }
        return CUDA_SUCCESS;
    }
    CUresult device_name(char* name, int length, CUdevice device) override
    {
        std::strncpy(name, devices.at(static_cast<std::size_t>(device)).name.c_str(), static_cast<std::size_t>(length));
        return CUDA_SUCCESS;
    }
    CUresult primary_context_retain(CUcontext* context, CUdevice device) override
    {
        *context = context_of(device);
        ++retained_;
        return CUDA_SUCCESS;
    }
    CUresult primary_context_release(CUdevice) override
    {
        --retained_;
        return CUDA_SUCCESS;
    }
    CUresult context_get_current(CUcontext* context) override
    {
        *context = current();
        return CUDA_SUCCESS;
    }
    CUresult context_set_current(CUcontext context) override
    {
        current() = context;
        return CUDA_SUCCESS;
    }
    CUresult context_get_device(CUdevice* device) override
    {
        for (std::size_t i = 0; i < devices.size(); ++i)
            if (context_of(static_cast<CUdevice>(i)) == current()) {
                *device = static_cast<CUdevice>(i);
                return CUDA_SUCCESS;
            }
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    CUresult context_synchronize() override
    {
        ++synchronizations;
        return CUDA_SUCCESS;
    }

    CUresult module_load_data(CUmodule* module, const void* image) override
    {
        if (on_load) {
            CUresult result = on_load(image);
            if (result != CUDA_SUCCESS) return result;
        }
        ++loads;
        std::lock_guard lock(mutex_);
        loaded_images.push_back(std::memcmp(image,
                                            "\x7f"
                                            "ELF",
                                            4) == 0
                                    ? "ELF"
                                    : "PTX");
        modules_.push_back(std::make_unique<int>(0));
        *module = reinterpret_cast<CUmodule>(modules_.back().get());
        return CUDA_SUCCESS;
    }
    CUresult module_unload(CUmodule) override
    {
        ++unloads_;
        return CUDA_SUCCESS;
    }
    CUresult module_get_function(CUfunction* function, CUmodule, const char* name) override
    {
        if (missing_symbols.count(name)) return CUDA_ERROR_NOT_FOUND;
        std::lock_guard lock(mutex_);
        symbols_.push_back(std::make_unique<std::string>(name));
        *function = reinterpret_cast<CUfunction>(symbols_.back().get());
        return CUDA_SUCCESS;
    }
    CUresult function_attribute(int* value, CUfunction_attribute attribute, CUfunction function) override
    {
        FakeFunction facts = facts_of(function);
        switch (attribute) {
            case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
                *value = facts.max_threads_per_block;
                break;
            case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
                *value = facts.static_shared;
                break;
            case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
                *value = dynamic_shared(function);
                break;
            default:
                return CUDA_ERROR_INVALID_VALUE;
        }
        return CUDA_SUCCESS;
    }
    CUresult function_set_attribute(CUfunction function, CUfunction_attribute attribute, int value) override
    {
        if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;
        std::lock_guard lock(mutex_);
        opted_in_[function] = value;
        return CUDA_SUCCESS;
    }
    CUresult function_param_info(CUfunction function, std::size_t index, std::size_t* offset,
                                 std::size_t* size) override
    {
        FakeFunction facts = facts_of(function);
        if (!facts.param_sizes) return CUDA_ERROR_NOT_SUPPORTED;
        if (index >= facts.param_sizes->size()) return CUDA_ERROR_INVALID_VALUE;
        *size = (*facts.param_sizes)[index];
        *offset = 0;
        return CUDA_SUCCESS;
    }
    CUresult launch(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned shared_mem, CUstream stream, void** params) override
    {
        FakeLaunch record{symbol_of(function), {gx, gy, gz}, {bx, by, bz}, shared_mem, stream, {}, current()};
        FakeFunction facts = facts_of(function);
        if (shared_mem > static_cast<unsigned>(dynamic_shared(function))) return CUDA_ERROR_INVALID_VALUE;
        std::size_t count = facts.param_sizes ? facts.param_sizes->size() : 0;
        for (std::size_t i = 0; i < count; ++i)
            record.params.emplace_back(static_cast<const char*>(params[i]), (*facts.param_sizes)[i]);
        auto run = on_launch.find(record.symbol);
        if (run != on_launch.end()) run->second(record);
        std::lock_guard lock(mutex_);
        launches_.push_back(std::move(record));
        return CUDA_SUCCESS;
    }

    CUresult mem_alloc(CUdeviceptr* address, std::size_t bytes) override
    {
        std::lock_guard lock(mutex_);
        memory_.push_back(std::make_unique<std::byte[]>(bytes));
        *address = reinterpret_cast<CUdeviceptr>(memory_.back().get());
        return CUDA_SUCCESS;
    }
    CUresult mem_free(CUdeviceptr) override
    {
        ++frees_;
        return CUDA_SUCCESS;
    }
    CUresult memcpy_htod(CUdeviceptr destination, const void* source, std::size_t bytes) override
    {
        std::memcpy(reinterpret_cast<void*>(destination), source, bytes);
        return CUDA_SUCCESS;
    }
    CUresult memcpy_dtoh(void* destination, CUdeviceptr source, std::size_t bytes) override
    {
        if (fail_copies_to_host) return CUDA_ERROR_ILLEGAL_ADDRESS;
        std::memcpy(destination, reinterpret_cast<const void*>(source), bytes);
        return CUDA_SUCCESS;
    }
    std::string error_text(CUresult result) override
    {
        return "CUDA_ERROR_FAKE_" + std::to_string(static_cast<int>(result)) + ": fake failure";
    }

    int retained() const { return retained_; }
    int unloads() const { return unloads_; }

    /// A packed parameter read back as T.
    template <typename T>
    static T param(const FakeLaunch& launch, std::size_t index)
    {
        T value{};
        std::memcpy(&value, launch.params.at(index).data(), sizeof(T));
        return value;
    }

private:
    static CUcontext& current()
    {
        static thread_local CUcontext context = nullptr;
        return context;
    }
    CUcontext context_of(CUdevice device) { return reinterpret_cast<CUcontext>(context_tokens_ + device); }
    std::string symbol_of(CUfunction function) const { return *reinterpret_cast<const std::string*>(function); }
    FakeFunction facts_of(CUfunction function) const
    {
        auto it = functions.find(symbol_of(function));
        return it == functions.end() ? FakeFunction{} : it->second;
    }
    int dynamic_shared(CUfunction function)
    {
        std::lock_guard lock(mutex_);
        auto it = opted_in_.find(function);
        return it == opted_in_.end() ? facts_of(function).max_dynamic_shared : it->second;
    }

    mutable std::mutex mutex_;
    char context_tokens_[8] = {};
    std::vector<FakeLaunch> launches_;
    std::vector<std::unique_ptr<int>> modules_;
    std::vector<std::unique_ptr<std::string>> symbols_;
    std::vector<std::unique_ptr<std::byte[]>> memory_;
    std::map<CUfunction, int> opted_in_;
    std::atomic<int> retained_{0};
    std::atomic<int> unloads_{0};
    std::atomic<int> frees_{0};
};

}  // namespace ck::test
