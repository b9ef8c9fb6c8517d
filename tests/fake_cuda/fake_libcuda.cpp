// A stand-in libcuda.so.1 for machines without a driver: it exports only
// cuGetProcAddress_v2, as the runtime expects of the real one, and answers
// with small working versions of the entry points the runtime uses. "Device"
// memory is host memory. Tests find it through LD_LIBRARY_PATH and read
// fake_cuda_launches() to see what ran.
#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// One current context per process (not per thread): the loader test is
// single-threaded, and thread_local in a dlopened module trips LeakSanitizer.
CUcontext current = nullptr;
char context_token;
int launches = 0;
int module_token;

CUresult CUDAAPI fake_init(unsigned) { return CUDA_SUCCESS; }
CUresult CUDAAPI fake_driver_version(int* v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_device_count(int* n)
{
    *n = 1;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_device_get(CUdevice* d, int ordinal)
{
    *d = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI fake_device_attribute(int* value, CUdevice_attribute attribute, CUdevice)
{
    switch (attribute) {
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
            *value = 9;
            break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
            *value = 0;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
            *value = 64;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
            *value = 2147483647;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
            *value = 65535;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
            *value = 49152;
            break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
            *value = 232448;
            break;
        default:
            *value = 1024;
            break;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_device_name(char* name, int length, CUdevice)
{
    std::strncpy(name, "Fake libcuda device", static_cast<std::size_t>(length));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_retain(CUcontext* c, CUdevice)
{
    *c = reinterpret_cast<CUcontext>(&context_token);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_release(CUdevice) { return CUDA_SUCCESS; }
CUresult CUDAAPI fake_get_current(CUcontext* c)
{
    *c = current;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_set_current(CUcontext c)
{
    current = c;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_get_device(CUdevice* d)
{
    *d = 0;
    return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult CUDAAPI fake_synchronize() { return CUDA_SUCCESS; }
CUresult CUDAAPI fake_module_load(CUmodule* m, const void*)
{
    *m = reinterpret_cast<CUmodule>(&module_token);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_module_unload(CUmodule) { return CUDA_SUCCESS; }
CUresult CUDAAPI fake_get_function(CUfunction* f, CUmodule, const char*)
{
    *f = reinterpret_cast<CUfunction>(&module_token);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_function_attribute(int* value, CUfunction_attribute attribute, CUfunction)
{
    *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK           ? 1024
             : attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? 49152
                                                                            : 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_set_attribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }

CUresult CUDAAPI fake_launch(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**)
{
    ++launches;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI fake_alloc(CUdeviceptr* p, size_t bytes)
{
    *p = reinterpret_cast<CUdeviceptr>(std::malloc(bytes));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_free(CUdeviceptr p)
{
    std::free(reinterpret_cast<void*>(p));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_htod(CUdeviceptr d, const void* h, size_t n)
{
    std::memcpy(reinterpret_cast<void*>(d), h, n);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_dtoh(void* h, CUdeviceptr d, size_t n)
{
    std::memcpy(h, reinterpret_cast<void*>(d), n);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_error_name(CUresult, const char** s)
{
    *s = "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}
CUresult CUDAAPI fake_error_string(CUresult, const char** s)
{
    *s = "fake libcuda error";
    return CUDA_SUCCESS;
}

const std::map<std::string, void*>& entry_points()
{
    static const std::map<std::string, void*> table = {
        {"cuInit", reinterpret_cast<void*>(&fake_init)},
        {"cuDriverGetVersion", reinterpret_cast<void*>(&fake_driver_version)},
        {"cuDeviceGetCount", reinterpret_cast<void*>(&fake_device_count)},
        {"cuDeviceGet", reinterpret_cast<void*>(&fake_device_get)},
        {"cuDeviceGetAttribute", reinterpret_cast<void*>(&fake_device_attribute)},
        {"cuDeviceGetName", reinterpret_cast<void*>(&fake_device_name)},
        {"cuDevicePrimaryCtxRetain", reinterpret_cast<void*>(&fake_retain)},
        {"cuDevicePrimaryCtxRelease", reinterpret_cast<void*>(&fake_release)},
        {"cuCtxGetCurrent", reinterpret_cast<void*>(&fake_get_current)},
        {"cuCtxSetCurrent", reinterpret_cast<void*>(&fake_set_current)},
        {"cuCtxGetDevice", reinterpret_cast<void*>(&fake_get_device)},
        {"cuCtxSynchronize", reinterpret_cast<void*>(&fake_synchronize)},
        {"cuModuleLoadData", reinterpret_cast<void*>(&fake_module_load)},
        {"cuModuleUnload", reinterpret_cast<void*>(&fake_module_unload)},
        {"cuModuleGetFunction", reinterpret_cast<void*>(&fake_get_function)},
        {"cuFuncGetAttribute", reinterpret_cast<void*>(&fake_function_attribute)},
        {"cuFuncSetAttribute", reinterpret_cast<void*>(&fake_set_attribute)},
        {"cuLaunchKernel", reinterpret_cast<void*>(&fake_launch)},
        {"cuMemAlloc", reinterpret_cast<void*>(&fake_alloc)},
        {"cuMemFree", reinterpret_cast<void*>(&fake_free)},
        {"cuMemcpyHtoD", reinterpret_cast<void*>(&fake_htod)},
        {"cuMemcpyDtoH", reinterpret_cast<void*>(&fake_dtoh)},
        {"cuGetErrorName", reinterpret_cast<void*>(&fake_error_name)},
        {"cuGetErrorString", reinterpret_cast<void*>(&fake_error_string)},
        // cuFuncGetParamInfo is left out: an older driver, which the runtime tolerates.
    };
    return table;
}

}  // namespace

FAKE_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t,
                                                 CUdriverProcAddressQueryResult* status)
{
    auto it = entry_points().find(symbol);
    *pfn = it == entry_points().end() ? nullptr : it->second;
    if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/// How many kernels were launched: read by the tests.
FAKE_EXPORT int fake_cuda_launches() { return launches; }
