// Device helpers shared by the particle kernels: periodic wrapping and the
// cell of a position. Included as "particles/kernels/common.cuh".
#ifndef PARTICLES_KERNELS_COMMON_CUH
#define PARTICLES_KERNELS_COMMON_CUH

namespace particles {

// Position wrapped into [0, length), as Python's x % length does for floats.
__device__ inline double wrap(double x, double length)
{
    double r = fmod(x, length);
    return r < 0.0 ? r + length : r;
}

// Cell index of position x on a grid of n_cells cells of width dx.
__device__ inline long long cell_of(double x, double dx, long long n_cells)
{
    long long cell = (long long)floor(x / dx);
    return cell < 0 ? 0 : (cell >= n_cells ? n_cells - 1 : cell);
}

}  // namespace particles

#endif  // PARTICLES_KERNELS_COMMON_CUH
