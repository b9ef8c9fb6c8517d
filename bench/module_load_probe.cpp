// The CUDA driver's own share of a first call (issue 14, bench/RESULTS.md):
// a cubin's load in a fresh process, cuModuleLoadData against
// cuLibraryLoadData (CUDA 12's context-independent loading), four loads in
// a row, with the first launch when asked (a kernel taking one float*).
// Not built by Meson (it links the driver, which the project only dlopens):
//   nvcc -cubin -arch=sm_90 -o touch.cubin touch.cu   # extern "C" __global__ void touch(float* x) { x[threadIdx.x]
//   = 1.0f; } g++ -O2 -std=c++20 -I/usr/local/cuda/include bench/module_load_probe.cpp -o module-load-probe
//       -L/usr/local/cuda/lib64/stubs -lcuda   (one line)
//   CUDA_MODULE_LOADING=LAZY ./module-load-probe touch.cubin touch module launch
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

void check(CUresult result, const char* call)
{
    if (result == CUDA_SUCCESS) return;
    const char* text = "";
    cuGetErrorString(result, &text);
    std::fprintf(stderr, "%s: %s\n", call, text);
    std::exit(1);
}

double micros(Clock::time_point from, Clock::time_point to)
{
    return std::chrono::duration<double, std::micro>(to - from).count();
}

CUfunction load(const std::string& image, const char* name, bool library)
{
    CUfunction function = nullptr;
    if (library) {
        CUlibrary loaded;
        check(cuLibraryLoadData(&loaded, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), "cuLibraryLoadData");
        CUkernel kernel;
        check(cuLibraryGetKernel(&kernel, loaded, name), "cuLibraryGetKernel");
        check(cuKernelGetFunction(&function, kernel), "cuKernelGetFunction");  // loads it into this context
    } else {
        CUmodule module;
        check(cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
        check(cuModuleGetFunction(&function, module, name), "cuModuleGetFunction");
    }
    return function;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: module-load-probe CUBIN KERNEL module|library [launch]\n");
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string image = bytes.str();
    const bool library = std::strcmp(argv[3], "library") == 0, launch = argc > 4;
    const char* loading = std::getenv("CUDA_MODULE_LOADING");

    check(cuInit(0), "cuInit");
    CUdevice device;
    check(cuDeviceGet(&device, 0), "cuDeviceGet");
    CUcontext context;
    check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    CUdeviceptr buffer;  // the context made resident before the first load
    check(cuMemAlloc(&buffer, 4096), "cuMemAlloc");
    check(cuCtxSynchronize(), "cuCtxSynchronize");

    for (int i = 0; i < 4; ++i) {
        Clock::time_point start = Clock::now();
        CUfunction function = load(image, argv[2], library);
        Clock::time_point loaded = Clock::now();
        std::printf("%s %s load#%d %.1f us", argv[3], loading ? loading : "default", i, micros(start, loaded));
        if (launch) {
            void* args[] = {&buffer};
            check(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
            std::printf(", first launch %.1f us", micros(loaded, Clock::now()));
            check(cuCtxSynchronize(), "cuCtxSynchronize");
        }
        std::printf("\n");
    }
}
