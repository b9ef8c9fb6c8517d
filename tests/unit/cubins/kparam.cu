// The cubin reader's test kernels. Regenerate the cubins beside it with
//   for a in sm_80 sm_90 sm_90a; do nvcc -cubin -arch=$a -o kparam.$a.cubin kparam.cu; done
// (CUDA 13.0 wrote the committed ones.)
#include "kparam_structs.cuh"

// 8-, 32- and 64-bit scalars, pointers, structs with padding by value.
extern "C" __global__ void mixed(char c, double* x, int n, Padded p, float f, long long q, short s, void* raw,
                                 unsigned char u, double d)
{
    if (n > 0) x[0] = c + p.value + f + q + s + (raw ? 1 : 0) + u + d;
}

// No parameters: no parameter records.
extern "C" __global__ void empty() {}

// A C++ name: its section is named by the mangled symbol.
__global__ void mangled(int a, double b, Viewish v)
{
    if (a && v.last) v.view.data[0] = b + v.n;
}

// Past 4 KiB: ptxas writes EIATTR_KPARAM_INFO_V2 records.
extern "C" __global__ void huge(Huge h, int* out, double d)
{
    out[0] = h.values[1999] + static_cast<int>(d);
}
