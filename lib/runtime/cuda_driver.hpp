// The CUDA driver calls the runtime makes, behind a small interface: the real
// one is libcuda.so.1 loaded with dlopen (DlopenCudaDriver); unit tests use a
// fake. Each call returns the driver's CUresult unchanged; the callers turn
// errors into CudaError with error_text().
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

namespace ck {

class CudaDriver {
public:
    virtual ~CudaDriver() = default;

    virtual CUresult init() = 0;
    virtual CUresult driver_version(int* version) = 0;
    virtual CUresult device_count(int* count) = 0;
    virtual CUresult device_get(CUdevice* device, int ordinal) = 0;
    virtual CUresult device_attribute(int* value, CUdevice_attribute attribute, CUdevice device) = 0;
    virtual CUresult device_name(char* name, int length, CUdevice device) = 0;

    virtual CUresult primary_context_retain(CUcontext* context, CUdevice device) = 0;
    virtual CUresult primary_context_release(CUdevice device) = 0;
    virtual CUresult context_get_current(CUcontext* context) = 0;
    virtual CUresult context_set_current(CUcontext context) = 0;
    virtual CUresult context_get_device(CUdevice* device) = 0;
    virtual CUresult context_synchronize() = 0;

    /// `image`: a cubin, or NUL-terminated PTX (JIT-compiled by the driver).
    virtual CUresult module_load_data(CUmodule* module, const void* image) = 0;
    virtual CUresult module_unload(CUmodule module) = 0;
    virtual CUresult module_get_function(CUfunction* function, CUmodule module, const char* name) = 0;

    virtual CUresult function_attribute(int* value, CUfunction_attribute attribute, CUfunction function) = 0;
    virtual CUresult function_set_attribute(CUfunction function, CUfunction_attribute attribute, int value) = 0;
    /// Offset and size of parameter `index` (cuFuncGetParamInfo, CUDA 12.4);
    /// CUDA_ERROR_INVALID_VALUE past the last parameter, CUDA_ERROR_NOT_SUPPORTED
    /// when the driver lacks the call.
    virtual CUresult function_param_info(CUfunction function, std::size_t index, std::size_t* offset,
                                         std::size_t* size) = 0;

    virtual CUresult launch(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                            unsigned block_y, unsigned block_z, unsigned shared_mem, CUstream stream,
                            void** params) = 0;

    virtual CUresult mem_alloc(CUdeviceptr* address, std::size_t bytes) = 0;
    virtual CUresult mem_free(CUdeviceptr address) = 0;
    virtual CUresult memcpy_htod(CUdeviceptr destination, const void* source, std::size_t bytes) = 0;
    virtual CUresult memcpy_dtoh(void* destination, CUdeviceptr source, std::size_t bytes) = 0;

    /// "CUDA_ERROR_OUT_OF_MEMORY: out of memory".
    virtual std::string error_text(CUresult result) = 0;
};

/// Loads the first of `names` that dlopen finds (default: libcuda.so.1) and
/// resolves every entry point through cuGetProcAddress. Returns nullptr with
/// `why` set when no library loads or an entry point is missing ("no CUDA
/// driver: libcuda.so.1: cannot open shared object file ...").
std::unique_ptr<CudaDriver> load_cuda_driver(const std::vector<std::string>& names, std::string* why);

/// The sonames tried by default.
const std::vector<std::string>& default_cuda_driver_names();

/// Throws CudaError "<what>: <error_text>" unless `result` is CUDA_SUCCESS.
void check_cuda(CudaDriver& driver, CUresult result, const std::string& what);

/// check_cuda for a fixed `what`: inline, and no string is made unless it
/// throws (the launch path checks every call's context query).
[[noreturn]] void throw_cuda_error(CudaDriver& driver, CUresult result, const char* what);
inline void check_cuda(CudaDriver& driver, CUresult result, const char* what)
{
    if (result != CUDA_SUCCESS) [[unlikely]]
        throw_cuda_error(driver, result, what);
}

}  // namespace ck
