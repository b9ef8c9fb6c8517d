"""Publishing under stress: concurrent builds and builds killed mid-compile."""

import hashlib
import json
import signal
import subprocess
import time
from pathlib import Path

from conftest import CLI, jobs_by_state


def make_tree(root: Path, kernels: int) -> Path:
    """A package of `kernels` kernels sharing a header, each slow enough to kill mid-compile."""
    package = root / "src" / "gen" / "kernels"
    package.mkdir(parents=True)
    for folder in (root / "src" / "gen", package):
        (folder / "__init__.py").write_text("")
    (package / "shared.cuh").write_text(
        "template <int N> __device__ double unrolled(const double* x) {\n"
        "    double s = 0;\n#pragma unroll\n    for (int i = 0; i < N; ++i) s += x[i] * i;\n    return s;\n}\n"
    )
    for k in range(kernels):
        name = f"k{k:03d}"
        folder = package / name
        folder.mkdir()
        (folder / f"{name}_kernels.py").write_text(f"def {name}(x: 'float[:]', y: 'float[:]', n: int):\n    pass\n")
        (folder / f"{name}_cuda.cu").write_text(
            '#include "gen/kernels/shared.cuh"\n'
            f'extern "C" __global__ void {name}(const double* x, double* y, long long n)\n'
            "{ long long i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"  if (i < n) y[i] = unrolled<{200 + k}>(x + i); }}\n"
        )
    return root / "src"


def published_entries(cache: Path):
    # Beside the entries: the build locks (`<key>.lock`) of builders at work or killed.
    return [entry for entry in (cache / "cuda").glob("*/*") if ".lock" not in entry.name]


def assert_every_entry_whole(cache: Path):
    entries = published_entries(cache)
    for entry in entries:
        manifest = json.loads((entry / "manifest.json").read_text())
        for artifact in manifest["artifacts"]:
            data = (entry / artifact["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == artifact["sha256"], entry
    return len(entries)


def test_two_builds_of_one_tree_at_once_both_succeed_and_leave_one_entry_per_key(run, tmp_path):
    tree = make_tree(tmp_path / "tree", 6)
    cache = tmp_path / "cache"
    args = [CLI, "build", "--only", "cuda", "--json", "--jobs", "2", "--arch", "sm_90", "--no-ptx", "--cache-dir", str(cache), str(tree)]
    builders = [subprocess.Popen(args, env=run.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
    reports = []
    for builder in builders:
        out, err = builder.communicate(timeout=600)
        assert builder.returncode == 0, err
        reports.append(json.loads(out))
    keys = [{j["key"] for j in r["jobs"]} for r in reports]
    assert keys[0] == keys[1] and len(keys[0]) == 6
    assert assert_every_entry_whole(cache) == 6
    assert not list((cache / ".cunumpy-kernels-tmp").iterdir())


def test_a_build_killed_mid_compile_leaves_only_whole_entries(run, tmp_path):
    tree = make_tree(tmp_path / "tree", 8)
    cache = tmp_path / "cache"
    args = [CLI, "build", "--only", "cuda", "--jobs", "1", "--arch", "sm_90", "--no-ptx", "--cache-dir", str(cache), str(tree)]
    builder = subprocess.Popen(args, env=run.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and not published_entries(cache):
        time.sleep(0.02)
    builder.send_signal(signal.SIGKILL)
    builder.wait()
    published = assert_every_entry_whole(cache)
    assert 1 <= published < 8, "the build must be killed after its first entry and before its last"
    report, _ = run.json("build", "--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", cache, tree, check=0)
    assert len(jobs_by_state(report, "hit")) == published
    assert len(jobs_by_state(report, "built")) == 8 - published
    assert assert_every_entry_whole(cache) == 8
    assert not list((cache / ".cunumpy-kernels-tmp").iterdir()), "the dead builder's temporary folder stayed"
    # A lock is left only when the builder died between publishing and removing it: hits take no lock.
    for lock in cache.rglob("*.lock*"):
        assert (lock.parent / lock.name.split(".lock")[0] / "manifest.json").exists(), f"{lock} blocks a key"
