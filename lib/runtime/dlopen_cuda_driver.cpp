// libcuda.so.1 loaded at run time. Only cuGetProcAddress_v2 is taken with
// dlsym; every other entry point comes from it, asked for the ABI of the
// typedef it is stored in: cuda.h renames many functions to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2), so a plain dlsym would get legacy ABIs.
#include "runtime/cuda_driver.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/dynamic_library.hpp"

#include <cudaTypedefs.h>

namespace ck {

namespace {

// The CUDA version whose ABI every entry point below is requested with: the
// newest each typedef's suffix names, so drivers from CUDA 12.0 on work
// (cuFuncGetParamInfo needs 12.4 and is optional).
constexpr int abi_version = 12000;
constexpr int param_info_version = 12040;

struct DriverApi {
    PFN_cuInit_v2000 init = nullptr;
    PFN_cuDriverGetVersion_v2020 driver_version = nullptr;
    PFN_cuDeviceGetCount_v2000 device_count = nullptr;
    PFN_cuDeviceGet_v2000 device_get = nullptr;
    PFN_cuDeviceGetAttribute_v2000 device_attribute = nullptr;
    PFN_cuDeviceGetName_v2000 device_name = nullptr;
    PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain = nullptr;
    PFN_cuDevicePrimaryCtxRelease_v11000 primary_release = nullptr;
    PFN_cuCtxGetCurrent_v4000 context_get_current = nullptr;
    PFN_cuCtxSetCurrent_v4000 context_set_current = nullptr;
    PFN_cuCtxGetDevice_v2000 context_get_device = nullptr;
    PFN_cuCtxSynchronize_v2000 context_synchronize = nullptr;
    PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
    PFN_cuModuleUnload_v2000 module_unload = nullptr;
    PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
    PFN_cuFuncGetAttribute_v2020 function_attribute = nullptr;
    PFN_cuFuncSetAttribute_v9000 function_set_attribute = nullptr;
    PFN_cuFuncGetParamInfo_v12040 function_param_info = nullptr;  // optional
    PFN_cuLaunchKernel_v4000 launch = nullptr;
    PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
    PFN_cuMemFree_v3020 mem_free = nullptr;
    PFN_cuMemcpyHtoD_v3020 memcpy_htod = nullptr;
    PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;
    PFN_cuGetErrorName_v6000 error_name = nullptr;
    PFN_cuGetErrorString_v6000 error_string = nullptr;
};

class DlopenCudaDriver final : public CudaDriver {
public:
    DlopenCudaDriver(util::DynamicLibrary library, DriverApi api) : library_(std::move(library)), api_(api) {}

    CUresult init() override { return api_.init(0); }
    CUresult driver_version(int* version) override { return api_.driver_version(version); }
    CUresult device_count(int* count) override { return api_.device_count(count); }
    CUresult device_get(CUdevice* device, int ordinal) override { return api_.device_get(device, ordinal); }
    CUresult device_attribute(int* value, CUdevice_attribute attribute, CUdevice device) override
    {
        return api_.device_attribute(value, attribute, device);
    }
    CUresult device_name(char* name, int length, CUdevice device) override
    {
        return api_.device_name(name, length, device);
    }
    CUresult primary_context_retain(CUcontext* context, CUdevice device) override
    {
        return api_.primary_retain(context, device);
    }
    CUresult primary_context_release(CUdevice device) override { return api_.primary_release(device); }
    CUresult context_get_current(CUcontext* context) override { return api_.context_get_current(context); }
    CUresult context_set_current(CUcontext context) override { return api_.context_set_current(context); }
    CUresult context_get_device(CUdevice* device) override { return api_.context_get_device(device); }
    CUresult context_synchronize() override { return api_.context_synchronize(); }
    CUresult module_load_data(CUmodule* module, const void* image) override
    {
        return api_.module_load_data(module, image);
    }
    CUresult module_unload(CUmodule module) override { return api_.module_unload(module); }
    CUresult module_get_function(CUfunction* function, CUmodule module, const char* name) override
    {
        return api_.module_get_function(function, module, name);
    }
    CUresult function_attribute(int* value, CUfunction_attribute attribute, CUfunction function) override
    {
        return api_.function_attribute(value, attribute, function);
    }
    CUresult function_set_attribute(CUfunction function, CUfunction_attribute attribute, int value) override
    {
        return api_.function_set_attribute(function, attribute, value);
    }
    CUresult function_param_info(CUfunction function, std::size_t index, std::size_t* offset,
                                 std::size_t* size) override
    {
        if (!api_.function_param_info) return CUDA_ERROR_NOT_SUPPORTED;
        return api_.function_param_info(function, index, offset, size);
    }
    CUresult launch(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned shared_mem, CUstream stream, void** params) override
    {
        return api_.launch(function, gx, gy, gz, bx, by, bz, shared_mem, stream, params, nullptr);
    }
    CUresult mem_alloc(CUdeviceptr* address, std::size_t bytes) override { return api_.mem_alloc(address, bytes); }
    CUresult mem_free(CUdeviceptr address) override { return api_.mem_free(address); }
    CUresult memcpy_htod(CUdeviceptr destination, const void* source, std::size_t bytes) override
    {
        return api_.memcpy_htod(destination, source, bytes);
    }
    CUresult memcpy_dtoh(void* destination, CUdeviceptr source, std::size_t bytes) override
    {
        return api_.memcpy_dtoh(destination, source, bytes);
    }
    std::string error_text(CUresult result) override
    {
        const char* name = nullptr;
        const char* text = nullptr;
        api_.error_name(result, &name);
        api_.error_string(result, &text);
        return std::string(name ? name : "CUDA error " + std::to_string(static_cast<int>(result))) + ": " +
               (text ? text : "unknown error");
    }

private:
    util::DynamicLibrary library_;
    DriverApi api_;
};

class Resolver {
public:
    explicit Resolver(PFN_cuGetProcAddress_v12000 get) : get_(get) {}

    template <typename F>
    bool operator()(F& function, const char* name, int version = abi_version, bool required = true)
    {
        void* pointer = nullptr;
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CUresult result = get_(name, &pointer, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
        if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && pointer) {
            function = reinterpret_cast<F>(pointer);
            return true;
        }
        if (required && missing_.empty()) missing_ = name;
        return false;
    }

    const std::string& missing() const { return missing_; }

private:
    PFN_cuGetProcAddress_v12000 get_;
    std::string missing_;
};

bool resolve_all(Resolver& r, DriverApi& api)
{
    r(api.init, "cuInit");
    r(api.driver_version, "cuDriverGetVersion");
    r(api.device_count, "cuDeviceGetCount");
    r(api.device_get, "cuDeviceGet");
    r(api.device_attribute, "cuDeviceGetAttribute");
    r(api.device_name, "cuDeviceGetName");
    r(api.primary_retain, "cuDevicePrimaryCtxRetain");
    r(api.primary_release, "cuDevicePrimaryCtxRelease");
    r(api.context_get_current, "cuCtxGetCurrent");
    r(api.context_set_current, "cuCtxSetCurrent");
    r(api.context_get_device, "cuCtxGetDevice");
    r(api.context_synchronize, "cuCtxSynchronize");
    r(api.module_load_data, "cuModuleLoadData");
    r(api.module_unload, "cuModuleUnload");
    r(api.module_get_function, "cuModuleGetFunction");
    r(api.function_attribute, "cuFuncGetAttribute");
    r(api.function_set_attribute, "cuFuncSetAttribute");
    r(api.function_param_info, "cuFuncGetParamInfo", param_info_version, false);
    r(api.launch, "cuLaunchKernel");
    r(api.mem_alloc, "cuMemAlloc");
    r(api.mem_free, "cuMemFree");
    r(api.memcpy_htod, "cuMemcpyHtoD");
    r(api.memcpy_dtoh, "cuMemcpyDtoH");
    r(api.error_name, "cuGetErrorName");
    r(api.error_string, "cuGetErrorString");
    return r.missing().empty();
}

}  // namespace

const std::vector<std::string>& default_cuda_driver_names()
{
    static const std::vector<std::string> names = {"libcuda.so.1"};
    return names;
}

std::unique_ptr<CudaDriver> load_cuda_driver(const std::vector<std::string>& names, std::string* why)
{
    std::string error;
    // Kept mapped: the driver holds contexts and modules until the process ends.
    util::DynamicLibrary library = util::DynamicLibrary::open_first(names, &error, true);
    if (!library.loaded()) {
        if (why) *why = "no CUDA driver (" + error + "); CUDA kernels need an NVIDIA driver";
        return nullptr;
    }
    auto get = reinterpret_cast<PFN_cuGetProcAddress_v12000>(library.symbol("cuGetProcAddress_v2"));
    if (!get) {
        if (why)
            *why = "the CUDA driver " + library.path() +
                   " has no cuGetProcAddress_v2: it predates CUDA 12; update the driver";
        return nullptr;
    }
    Resolver resolver(get);
    DriverApi api;
    if (!resolve_all(resolver, api)) {
        if (why) *why = "the CUDA driver " + library.path() + " has no " + resolver.missing() + "; update the driver";
        return nullptr;
    }
    return std::make_unique<DlopenCudaDriver>(std::move(library), api);
}

void check_cuda(CudaDriver& driver, CUresult result, const std::string& what)
{
    if (result != CUDA_SUCCESS) throw_cuda_error(driver, result, what.c_str());
}

void throw_cuda_error(CudaDriver& driver, CUresult result, const char* what)
{
    throw CudaError(std::string(what) + ": " + driver.error_text(result));
}

}  // namespace ck
