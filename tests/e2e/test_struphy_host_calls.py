"""Struphy 3.5.0's kernels called from C++ through their cached host libraries (issue 42).

Every kernel whose parameters are arrays and scalars (22 of 116; the others
take Pyccel class instances or return a value) is built for the host, named
callable by `status`, and called by a C++ program that attaches no host
kernel, on the inputs the Python extension got: the results must be the
extension's bit for bit. struphy_host_inputs.py finds inputs that keep each
kernel's loops in bounds by running its plain-Python source first.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON, jobs_by_state
from test_host_library import needs_toolchain

APP = os.environ.get("CUNUMPY_KERNELS_KERNEL_CALL_APP")
INPUTS = Path(__file__).with_name("struphy_host_inputs.py")

# The kernels of Struphy 3.5.0 that take only arrays and scalars and return nothing.
CALLABLE = [
    "bsplines/kernels/eval_spline_mpi_tensor_product_fixed",
    *(f"feec/kernels/{name}" for name in [
        "assemble_dofs_for_weighted_basisfuns_1d", "assemble_dofs_for_weighted_basisfuns_2d",
        "assemble_dofs_for_weighted_basisfuns_3d", "kernel_1d_eval", "kernel_1d_mat", "kernel_1d_vec",
        "kernel_2d_eval", "kernel_2d_mat", "kernel_2d_vec", "kernel_3d_diag", "kernel_3d_eval", "kernel_3d_mat",
        "kernel_3d_matrixfree", "kernel_3d_vec", "surface_kernel_3d_mat", "surface_kernel_3d_vec"]),
    *(f"geometry/domains/{name}" for name in ["colella", "cuboid", "hollow_torus", "orthogonal"]),
    "pic/kernels/sort_and_fill_boxes",
]


@needs_toolchain
@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_KERNEL_CALL_APP is not set (run through meson)")
def test_struphys_callable_kernels_run_from_cpp_bit_identical_to_the_python_extension(run, struphy_tree, tmp_path):  # noqa: F811
    cache = tmp_path / "cache"
    folders = [struphy_tree / "struphy" / kernel for kernel in CALLABLE]
    report, result = run.json("build", "--only", "host", "--jobs", "2", "--python", PYTHON, "--cache-dir", cache,
                              *folders, timeout=1800)
    assert result.returncode == 0, result.stderr
    entries = {job["host_module"]: job["artifacts"][0] for job in jobs_by_state(report, "built")}

    status, _ = run.json("status", "--only", "host", "--python", PYTHON, "--cache-dir", cache, *folders, check=None)
    libraries = {kernel["name"]: kernel["host_library"] for kernel in status["kernels"]}
    assert sorted(libraries) == sorted(Path(kernel).name for kernel in CALLABLE)
    assert all(library["callable"] for library in libraries.values()), libraries

    data = tmp_path / "data"
    data.mkdir()
    prepared = subprocess.run([PYTHON, INPUTS, struphy_tree, json.dumps(entries),
                               json.dumps([f"struphy/{kernel}" for kernel in CALLABLE]), data],
                              capture_output=True, text=True, timeout=1200)
    assert prepared.returncode == 0, prepared.stderr
    inputs = json.loads(prepared.stdout.strip().splitlines()[-1])
    for name, found in inputs.items():
        print(f"{name}: inputs {found['inputs']}, changed {found.get('changed')}")
    no_inputs = [name for name, found in inputs.items() if found["inputs"] is None]
    assert not no_inputs, f"no in-bounds inputs changed an array of {no_inputs}"
    for name, found in inputs.items():
        assert found["difference"] <= 1e-9, (name, found)

    called = subprocess.run([APP, struphy_tree, cache, data / "calls"], env=dict(run.env, LD_LIBRARY_PATH=""),
                            capture_output=True, text=True, timeout=600)
    assert called.returncode == 0, called.stdout + called.stderr
    calls = [line for line in called.stdout.splitlines() if not line.startswith("warning: ")]
    assert sorted(calls) == sorted(f"{Path(k).name}: pyccel" for k in CALLABLE), called.stdout
    # The catalogs name no kernel whose Pyccel version they could not attach.
    assert "Pyccel version is not attached" not in called.stdout, called.stdout
    for name in inputs:
        for python_result in (data / name).glob("*.py"):
            cpp_result = python_result.with_suffix("")
            assert cpp_result.read_bytes() == python_result.read_bytes(), f"{name}: argument {cpp_result.name}"
