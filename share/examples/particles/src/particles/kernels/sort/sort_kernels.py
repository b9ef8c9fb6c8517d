"""Counting sort of the markers by cell, so that deposition reads memory in order.

Not ported to CUDA yet: cunumpy runs it on the host (missing_cuda="fallback").
"""

from numpy import floor


def sort(x: 'float[:]', dx: float, order: 'int[:]', counts: 'int[:]', n: int, n_cells: int):
    """Write into order the marker indices sorted by cell, and into counts the markers per cell."""
    for c in range(n_cells):
        counts[c] = 0
    for i in range(n):
        c = int(floor(x[i] / dx)) % n_cells
        counts[c] += 1
    start = 0
    for c in range(n_cells):
        size = counts[c]
        counts[c] = start
        start += size
    for i in range(n):
        c = int(floor(x[i] / dx)) % n_cells
        order[counts[c]] = i
        counts[c] += 1
    start = 0
    for c in range(n_cells):
        end = counts[c]
        counts[c] = end - start
        start = end
