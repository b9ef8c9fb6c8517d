"""Generates kernel trees for the benchmarks: N kernels in one package, sharing headers."""

from pathlib import Path


def make_kernel_tree(root: Path, kernels: int, work: int = 64) -> Path:
    """Writes `kernels` ported kernels under root/src/gen/kernels; returns root/src.

    Every kernel includes two shared headers (one including the other), as real
    packages do; `work` sets how much device code each kernel instantiates, so
    compile times resemble small real kernels.
    """
    package = root / "src" / "gen" / "kernels"
    package.mkdir(parents=True, exist_ok=True)
    for folder in (root / "src" / "gen", package):
        (folder / "__init__.py").write_text("")
    (package / "common.cuh").write_text(
        '#include "gen/kernels/math.cuh"\n'
        "template <int N> __device__ double accumulate(const double* x, long long i) {\n"
        "    double s = 0;\n#pragma unroll\n    for (int k = 0; k < N; ++k) s += weight(k) * x[i + k];\n"
        "    return s;\n}\n"
    )
    (package / "math.cuh").write_text("__device__ inline double weight(int k) { return 1.0 / (1.0 + k); }\n")
    for k in range(kernels):
        name = f"kernel_{k:04d}"
        folder = package / name
        folder.mkdir(exist_ok=True)
        (folder / f"{name}_kernels.py").write_text(
            f"def {name}(x: 'float[:]', y: 'float[:]', n: int):\n    for i in range(n):\n        y[i] = x[i]\n"
        )
        (folder / f"{name}_cuda.cu").write_text(
            '#include "gen/kernels/common.cuh"\n'
            f'extern "C" __global__ void {name}(const double* x, double* y, long long n)\n'
            "{\n    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < n) y[i] = accumulate<{work + k % 7}>(x, i);\n}}\n"
        )
    return root / "src"
