"""On a GPU: cunumpy's own first calls read the CuPy cache `build --cupy-cache` filled, and compile nothing.

    python3 cupy_cache_proof.py example SRC        the example's CUDA kernels called through cunumpy's
                                                   KernelCatalog, checked against the host kernels
    python3 cupy_cache_proof.py compile SRC_ROOT   every *_cuda.cu kernel under SRC_ROOT made as
                                                   Kernel.from_folder makes it, then CudaKernel.compile()

CUPY_CACHE_DIR names the cache. CuPy is instrumented in this process only: a
compile is a run of NVRTC on a kernel's source (CuPy's own preprocessing of
an empty file, which it does once per process to learn NVRTC's version, is
not one), a miss a lookup its cache could not answer. Prints one JSON object.
"""

import json
import sys
import time
from pathlib import Path

import cupy
import numpy as np
from cupy.cuda import compiler

counts = {"compiles": 0, "misses": 0, "hits": 0}
compile_source = compiler._compile_using_nvrtc_no_warning


def counted_compile(*args, **kwargs):
    counts["compiles"] += 1
    return compile_source(*args, **kwargs)


class CountingBackend:
    def __init__(self, inner):
        self.inner = inner

    def load(self, name):
        payload = self.inner.load(name)
        counts["hits" if payload is not None else "misses"] += 1
        return payload

    def save(self, name, payload, source):
        self.inner.save(name, payload, source)


compiler._compile_using_nvrtc_no_warning = counted_compile
compiler._kernel_cache_backend = CountingBackend(compiler._kernel_cache_backend)


def first_call(call):
    start = time.perf_counter()
    call()
    cupy.cuda.Device().synchronize()
    return time.perf_counter() - start


def example(src):
    sys.path.insert(0, str(src))
    from particles.kernels import catalog
    from particles.kernels.deposit.deposit_kernels import deposit as host_deposit
    from particles.kernels.push.push_kernels import push as host_push

    rng = np.random.default_rng(7)
    n, cells, length = 100_000, 64, 1.0
    x, v, e, w = rng.random(n) * length, rng.standard_normal(n), rng.standard_normal(n), rng.random(n)
    report = {}

    dx, dv = cupy.asarray(x), cupy.asarray(v)
    seconds = first_call(lambda: catalog["push"](dx, dv, cupy.asarray(e), 0.01, length, n))
    hx, hv = x.copy(), v.copy()
    host_push(hx, hv, e, 0.01, length, n)
    report["push"] = {"first_call_s": seconds,
                      "matches_host": bool(np.allclose(dx.get(), hx) and np.allclose(dv.get(), hv))}

    rho = cupy.zeros(cells)
    seconds = first_call(lambda: catalog["deposit"](cupy.asarray(x), cupy.asarray(w), rho, length / cells, n, cells))
    host_rho = np.zeros(cells)
    host_deposit(x, w, host_rho, length / cells, n, cells)
    report["deposit"] = {"first_call_s": seconds, "matches_host": bool(np.allclose(rho.get(), host_rho))}
    return report


def compile_all(root):
    from cunumpy.kernels import CudaKernel

    report = {}
    for source in sorted(root.rglob("*_cuda.cu")):
        name = source.name[: -len("_cuda.cu")]
        if source.parent.name != name:
            continue
        kernel = CudaKernel.from_file(source, name, include_dirs=(root,), check_signature=False)
        before = dict(counts)
        start = time.perf_counter()
        kernel.compile()
        report[name] = {"compile_s": time.perf_counter() - start,
                        "compiled": counts["compiles"] - before["compiles"],
                        "hit": counts["hits"] - before["hits"] == 1}
    return report


def main():
    mode, path = sys.argv[1], Path(sys.argv[2])
    kernels = example(path) if mode == "example" else compile_all(path)
    print(json.dumps({"mode": mode, "cupy": cupy.__version__, "nvrtc": ".".join(map(str, cupy.cuda.nvrtc.getVersion())),
                      "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), **counts,
                      "kernels": kernels}))


if __name__ == "__main__":
    main()
