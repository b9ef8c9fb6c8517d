// Structs aligned past 16 bytes passed by value (issue 43): the cubin's
// parameter offsets (EIATTR_KPARAM_INFO) against the driver's
// cuFuncGetParamInfo. pack.sh compiles it for sm_90 and sm_90a; run.sh
// compares with `cubin_param_info --cubin`.
struct __align__(16) A16 {
    double v[2];
};
struct __align__(32) A32 {
    double v[4];
};
struct __align__(64) A64 {
    double v[8];
};
struct __align__(32) A32Small {
    double v;
};

extern "C" __global__ void pointer_a16(double* x, A16 s) { x[0] = s.v[1]; }
extern "C" __global__ void pointer_a32(double* x, A32 s) { x[0] = s.v[1]; }
extern "C" __global__ void pointer_a64(double* x, A64 s) { x[0] = s.v[1]; }
extern "C" __global__ void char_a32_int(char c, A32 s, int n, double* x) { x[n] = s.v[1] + c; }
extern "C" __global__ void pointer_a64_a32(double* x, A64 a, A32 b) { x[0] = a.v[1] + b.v[2]; }
extern "C" __global__ void int_small_small(int n, A32Small a, A32Small b, double* x) { x[0] = a.v + b.v + n; }
extern "C" __global__ void three_pointers_a64(double* x, double* y, double* z, A64 a) { x[0] = y[0] + z[0] + a.v[1]; }
