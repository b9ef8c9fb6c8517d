// The particle kernels' host versions in C++, line for line the Pyccel host
// kernels of share/examples/particles/src/particles/kernels/*/*_kernels.py:
// the tests' reference, attached to catalogs that read no host library (the
// GPU tests, a bundle). The example application runs the cached Pyccel
// versions instead (doc/host-libraries.md).
#pragma once

#include <cmath>

namespace particles {

/// push_kernels.py: kick each velocity by the field, then drift and wrap into
/// [0, length) (Python's float `%`).
inline void push(double* x, double* v, const double* e, double dt, double length, long long n)
{
    for (long long i = 0; i < n; ++i) {
        v[i] = v[i] + dt * e[i];
        double r = std::fmod(x[i] + dt * v[i], length);
        x[i] = r < 0.0 ? r + length : r;
    }
}

/// Python's `%` on integers: the result has the divisor's sign.
inline long long python_mod(long long a, long long b)
{
    long long r = a % b;
    return r < 0 ? r + b : r;
}

/// deposit_kernels.py: cloud-in-cell deposition on a periodic grid.
inline void deposit(const double* x, const double* w, double* rho, double dx, long long n, long long n_cells)
{
    for (long long i = 0; i < n; ++i) {
        double s = x[i] / dx;
        auto left = static_cast<long long>(std::floor(s));
        double frac = s - static_cast<double>(left);
        left = python_mod(left, n_cells);
        long long right = (left + 1) % n_cells;
        rho[left] += w[i] * (1.0 - frac) / dx;
        rho[right] += w[i] * frac / dx;
    }
}

/// sort_kernels.py: counting sort of the markers by cell (not ported to CUDA).
inline void sort(const double* x, double dx, long long* order, long long* counts, long long n, long long n_cells)
{
    for (long long c = 0; c < n_cells; ++c) counts[c] = 0;
    for (long long i = 0; i < n; ++i) counts[python_mod(static_cast<long long>(std::floor(x[i] / dx)), n_cells)] += 1;
    long long start = 0;
    for (long long c = 0; c < n_cells; ++c) {
        long long size = counts[c];
        counts[c] = start;
        start += size;
    }
    for (long long i = 0; i < n; ++i) {
        long long c = python_mod(static_cast<long long>(std::floor(x[i] / dx)), n_cells);
        order[counts[c]] = i;
        counts[c] += 1;
    }
    start = 0;
    for (long long c = 0; c < n_cells; ++c) {
        long long end = counts[c];
        counts[c] = end - start;
        start = end;
    }
}

}  // namespace particles
