"""Cloud-in-cell deposition of the markers' charge on a periodic grid."""

from numpy import floor


def deposit(x: 'float[:]', w: 'float[:]', rho: 'float[:]', dx: float, n: int, n_cells: int):
    """Add each marker's weight to its two nearest grid points, linearly.

    x: positions, w: weights of the n markers; rho: charge density on the
    n_cells grid points (accumulated into, not cleared).
    """
    for i in range(n):
        s = x[i] / dx
        left = int(floor(s))
        frac = s - left
        left = left % n_cells
        right = (left + 1) % n_cells
        rho[left] += w[i] * (1.0 - frac) / dx
        rho[right] += w[i] * frac / dx
