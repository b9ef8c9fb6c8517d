"""The example application (share/examples/particles_app), an application that
links libcunumpy-kernels, run over a cache the CLI built.

Without a CUDA driver it must start, run every kernel's host version and say
why it skips the GPU; its GPU path is run on the H200 (tests/gpu/RESULTS.md).
"""

import os
import subprocess
from pathlib import Path

import pytest

APP = os.environ.get("CUNUMPY_KERNELS_PARTICLES_APP")


def cunumpy_include_dir():
    """cunumpy's CUDA headers, which the example's deposit includes (scripts/setup installs cunumpy)."""
    import cunumpy

    return Path(cunumpy.__file__).parent / "cuda" / "include"


@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_PARTICLES_APP is not set (run through meson)")
def test_app_runs_host_kernels_without_a_driver(run, example, tmp_path):
    include = cunumpy_include_dir()
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, "--cunumpy-include-dir", include, example, check=0)
    env = dict(run.env, LD_LIBRARY_PATH="")  # no libcuda.so.1 on the library path
    result = subprocess.run(
        [APP, "--src", example, "--cache-dir", cache, "--cunumpy-include-dir", include, "--markers", "2000"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "CUDA kernels: 2 of 3 (missing: sort)"
    assert "host: 2000 markers pushed, deposited and sorted" in lines
    if not Path("/usr/lib/x86_64-linux-gnu/libcuda.so.1").exists():
        assert any(line.startswith("no GPU (no CUDA driver") for line in lines), result.stdout


@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_PARTICLES_APP is not set (run through meson)")
def test_app_reports_bad_flags(tmp_path):
    result = subprocess.run([APP, "--frobnicate", "1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown flag --frobnicate" in result.stderr
