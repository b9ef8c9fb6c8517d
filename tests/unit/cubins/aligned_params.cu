// Structs aligned past 16 bytes passed by value: ptxas aligns each
// parameter's address in constant bank 0, whose parameters start at another
// offset per architecture (parameter_bank_offset), so their offsets differ
// between sm_80, sm_90 and sm_100. Regenerate the cubins beside it with
//   for a in sm_80 sm_90 sm_100 sm_120; do nvcc -cubin -arch=$a -o aligned_params.$a.cubin aligned_params.cu; done
// (CUDA 13.0 wrote the committed ones). The GPU run (tests/gpu/run.sh)
// compares them with cuFuncGetParamInfo.
#include "aligned_structs.cuh"

extern "C" __global__ void pointer_a16(double* x, A16 s) { x[0] = s.v[1]; }
extern "C" __global__ void pointer_a32(double* x, A32 s) { x[0] = s.v[1]; }
extern "C" __global__ void pointer_a64(double* x, A64 s) { x[0] = s.v[1]; }
extern "C" __global__ void char_a32_int(char c, A32 s, int n, double* x) { x[n] = s.v[1] + c; }
extern "C" __global__ void pointer_a64_a32(double* x, A64 a, A32 b) { x[0] = a.v[1] + b.v[2]; }
extern "C" __global__ void int_small_small(int n, A32Small a, A32Small b, double* x) { x[0] = a.v + b.v + n; }
extern "C" __global__ void three_pointers_a64(double* x, double* y, double* z, A64 a) { x[0] = y[0] + z[0] + a.v[1]; }
