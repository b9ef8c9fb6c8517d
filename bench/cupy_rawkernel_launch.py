"""Reference for bench_runtime_launch: the example's `push` launched through CuPy.

Two ways, each timed over the host-side launch loop as the C++ benchmark is
(the GPU runs the tiny kernel faster than launches arrive, so the queue never
fills): RawModule over the cubin that `build` wrote, and RawKernel compiled
from the same source.

    python3 bench/cupy_rawkernel_launch.py CUBIN SOURCE_ROOT
"""

import statistics
import sys
import time
from pathlib import Path

import cupy as cp

MARKERS = 1024
LAUNCHES = 200_000
REPETITIONS = 5


def per_launch_us(function, args):
    for _ in range(1000):
        function((8,), (128,), args)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(REPETITIONS):
        start = time.perf_counter()
        for _ in range(LAUNCHES):
            function((8,), (128,), args)
        times.append((time.perf_counter() - start) / LAUNCHES * 1e6)
        cp.cuda.Device().synchronize()
    return statistics.median(times), min(times), max(times)


def main():
    cubin, root = Path(sys.argv[1]), Path(sys.argv[2])
    x, v, e = (cp.zeros(MARKERS) for _ in range(3))
    args = (x, v, e, cp.float64(0.05), cp.float64(1.0), cp.int64(MARKERS))
    module = cp.RawModule(path=str(cubin))
    source = (root / "share/examples/particles/src/particles/kernels/push/push_cuda.cu").read_text()
    kernel = cp.RawKernel(source, "push", options=(f"-I{root / 'share/examples/particles/src'}",))
    for label, function in (("RawModule(cubin)", module.get_function("push")), ("RawKernel(source)", kernel)):
        median, low, high = per_launch_us(function, args)
        print(f"cupy {cp.__version__} {label}: {median:.2f} us per launch (median of {REPETITIONS}; {low:.2f} to {high:.2f})")


if __name__ == "__main__":
    main()
