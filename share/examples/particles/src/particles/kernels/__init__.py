"""The particle kernels: one folder each, the Pyccel host kernel beside its CUDA port."""

import cunumpy as xp

# Positions of the arrays each kernel writes, for the host wrapper.
OUTPUTS = {"push": (0, 1), "deposit": (2,), "sort": (2, 3)}

catalog = xp.kernels.KernelCatalog.from_package(
    __name__,
    missing_cuda="fallback",  # sort is not ported yet
    dispatch="arrays",
    host_options=lambda name: {"outputs": OUTPUTS.get(name)},
)
