"""GPU test (meson suite gpu) of `build --cupy-cache`: exit 77 (skipped) without CuPy or a GPU.

`build --only cupy` fills a fresh CuPy cache for the bundled example with no
GPU visible (CUDA_VISIBLE_DEVICES=), for the device's own compute capability;
then a fresh process calls the example's CUDA kernels through cunumpy
(cupy_cache_proof.py) and must compile nothing, miss nothing, and match the
host kernels.

    python3 tests/gpu/cupy_cache_gpu.py [CLI] [SOURCE_ROOT]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = 77
here = Path(__file__).resolve().parent
root = Path(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("CUNUMPY_KERNELS_SOURCE_ROOT", here.parents[1]))
cli = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CUNUMPY_KERNELS", str(root / "build/tools/cunumpy-kernels"))

try:
    import cupy

    capability = cupy.cuda.Device(0).compute_capability
except Exception as error:  # no CuPy, no driver, no device
    print(f"skipped: no CuPy with a GPU here ({type(error).__name__}: {error})")
    sys.exit(SKIP)

with tempfile.TemporaryDirectory() as work:
    work = Path(work)
    src = work / "src"
    shutil.copytree(root / "share/examples/particles/src", src, ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, HOME=str(work), CUDA_VISIBLE_DEVICES="")
    fill = subprocess.run([cli, "build", "--only", "cupy", "--arch", f"sm_{capability}", "--no-ptx", "--python",
                           sys.executable, "--cupy-cache-dir", str(work / "cupy"), "--json", str(src / "particles")],
                          env=env, capture_output=True, text=True)
    print(fill.stderr, end="")
    assert fill.returncode == 0, fill.stdout
    jobs = [j for j in json.loads(fill.stdout)["jobs"] if j["kind"] == "cupy"]
    assert [j["state"] for j in jobs] == ["built", "built"], jobs

    env = dict(os.environ, HOME=str(work), CUPY_CACHE_DIR=str(work / "cupy"))
    proof = subprocess.run([sys.executable, str(here / "cupy_cache_proof.py"), "example", str(src)], env=env,
                           capture_output=True, text=True)
    assert proof.returncode == 0, proof.stderr
    report = json.loads(proof.stdout.strip().splitlines()[-1])
    print(json.dumps(report))
    assert report["compiles"] == 0 and report["misses"] == 0 and report["hits"] == 2, report
    assert all(k["matches_host"] for k in report["kernels"].values()), report
print("passed: cunumpy's first calls compiled nothing")
