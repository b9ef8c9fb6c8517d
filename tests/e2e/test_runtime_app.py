"""The example application (share/examples/particles_app), an application that
links libcunumpy-kernels, run over a cache the CLI built.

Without a CUDA driver it must start, run every kernel's cached Pyccel version
(the host libraries `build` links; it writes no host kernel of its own) and
say why it skips the GPU; its GPU path is run on the H200 (tests/gpu/RESULTS.md).
"""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON
from test_host_library import has_pyccel

APP = os.environ.get("CUNUMPY_KERNELS_PARTICLES_APP")


def cunumpy_include_dir():
    """cunumpy's CUDA headers, which the example's deposit includes (scripts/setup installs cunumpy)."""
    import cunumpy

    return Path(cunumpy.__file__).parent / "cuda" / "include"


def run_app(run, example, cache, markers):
    env = dict(run.env, LD_LIBRARY_PATH="")  # no libcuda.so.1 on the library path
    result = subprocess.run(
        [APP, "--src", example, "--cache-dir", cache, "--cunumpy-include-dir", cunumpy_include_dir(),
         "--markers", str(markers)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "CUDA kernels: 2 of 3 (missing: sort)"
    if not Path("/usr/lib/x86_64-linux-gnu/libcuda.so.1").exists():
        assert any(line.startswith("no GPU (no CUDA driver") for line in lines), result.stdout
    return lines


@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_PARTICLES_APP is not set (run through meson)")
@pytest.mark.skipif(not has_pyccel(), reason="Pyccel is not installed")
def test_app_runs_the_cached_pyccel_kernels_without_a_driver(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--python", PYTHON, "--cache-dir", cache, "--cunumpy-include-dir", cunumpy_include_dir(), example,
        check=0)
    lines = run_app(run, example, cache, 2000)
    assert "host: 2000 markers pushed, deposited and sorted (cached Pyccel versions)" in lines
    assert not any(line.startswith("warning:") for line in lines), lines


@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_PARTICLES_APP is not set (run through meson)")
def test_app_names_the_kernels_without_a_host_version(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, "--cunumpy-include-dir", cunumpy_include_dir(), example,
        check=0)
    lines = run_app(run, example, cache, 100)
    assert "host: no host version of deposit, push, sort in the cache (`cunumpy-kernels build --only host` " \
           "builds them)" in lines, lines


@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_PARTICLES_APP is not set (run through meson)")
def test_app_reports_bad_flags(tmp_path):
    result = subprocess.run([APP, "--frobnicate", "1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown flag --frobnicate" in result.stderr
