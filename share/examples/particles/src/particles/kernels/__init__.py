"""The particle kernels: one folder each, the Pyccel host kernel beside its CUDA port."""

import cunumpy as xp

# Positions of the arrays each kernel writes, for the host wrapper.
OUTPUTS = {"push": (0, 1), "deposit": (2,), "sort": (2, 3)}

# Host kernels compiled with Pyccel on first use and kept in
# ~/.cache/particles/kernels; `cunumpy-kernels build` fills that cache ahead.
compile_kernels = xp.kernels.PyccelCache("particles")

catalog = xp.kernels.KernelCatalog.from_package(
    __name__,
    missing_cuda="fallback",  # sort is not ported yet
    dispatch="arrays",
    host_options=lambda name: {"outputs": OUTPUTS.get(name)},
    compile_host=compile_kernels,
)
