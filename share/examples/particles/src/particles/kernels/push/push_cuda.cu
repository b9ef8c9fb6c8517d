#include "particles/kernels/common.cuh"

// Same parameters, in the same order, as push in push_kernels.py. One thread per marker.
extern "C" __global__ void push(double* x, double* v, const double* e, double dt, double length, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    v[i] = v[i] + dt * e[i];
    x[i] = particles::wrap(x[i] + dt * v[i], length);
}
