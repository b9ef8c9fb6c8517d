#include <cunumpy/atomic.cuh>

#include "particles/kernels/common.cuh"

// Same parameters, in the same order, as deposit in deposit_kernels.py. One
// thread per marker; grid points are shared, so additions are atomic.
extern "C" __global__ void deposit(const double* x, const double* w, double* rho, double dx, long long n,
                                   long long n_cells)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double s = x[i] / dx;
    long long left = (long long)floor(s);
    double frac = s - (double)left;
    left = ((left % n_cells) + n_cells) % n_cells;
    long long right = (left + 1) % n_cells;
    cunumpy_atomic_add(&rho[left], w[i] * (1.0 - frac) / dx);
    cunumpy_atomic_add(&rho[right], w[i] * frac / dx);
}
