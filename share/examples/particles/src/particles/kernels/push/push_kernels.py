"""Leapfrog push of the markers in a periodic 1D box."""


def push(x: 'float[:]', v: 'float[:]', e: 'float[:]', dt: float, length: float, n: int):
    """Kick each marker's velocity by the field at its position, then drift and wrap.

    x, v: positions and velocities of the n markers (updated in place);
    e: the electric field at each marker (charge-to-mass ratio folded in).
    """
    for i in range(n):
        v[i] = v[i] + dt * e[i]
        x[i] = (x[i] + dt * v[i]) % length
