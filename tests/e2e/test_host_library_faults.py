"""Host libraries that are damaged, missing, stale or loaded beside others (issue 42's trial).

Each fault is named (catalog warning, call error, `status`), never a crash or
another library's results, and `build` (after `cache verify --fix` for a
damaged entry) repairs it.
"""

import os
import subprocess
import textwrap

import numpy as np
import pytest

from conftest import CLI, PYTHON, jobs_by_state
from test_host_library import needs_toolchain

APP = os.environ.get("CUNUMPY_KERNELS_KERNEL_CALL_APP")
pytestmark = [needs_toolchain,
              pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_KERNEL_CALL_APP is not set (run through meson)")]

# Kernel `aa` returns a value (no entry C++ can call); its module also has a
# function `ab` that writes -1, as a second library's kernel of that name must
# never be served from it. Kernel `ab` scales its array.
FILES = {
    "fl/__init__.py": "",
    "fl/kernels/__init__.py": "",
    "fl/kernels/aa/aa_kernels.py": """
        def aa(x: 'float[:]') -> float:
            return x[0]


        def ab(x: 'float[:]', a: float):
            x[:] = -1.0
        """,
    "fl/kernels/ab/ab_kernels.py": """
        def ab(x: 'float[:]', a: float):
            for i in range(x.shape[0]):
                x[i] = x[i] * a
        """,
}
VALUES = np.arange(1.0, 5.0)


def make_tree(root):
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def call_ab(tmp_path, *where, name="calls"):
    """Runs kernel ab on VALUES with a = 3 through kernel-call-app: (stdout lines, the array after)."""
    data = tmp_path / f"{name}-x"
    VALUES.tofile(data)
    calls = tmp_path / name
    calls.write_text(f"call {tmp_path / 'src' / 'fl' / 'kernels'} ab\n"
                     f"array float64 {data} 1 {VALUES.size} 1\nscalar float64 {(3.0).hex()}\nend\n")
    result = subprocess.run([APP, *map(str, where), calls], capture_output=True, text=True, timeout=120)
    return result.stdout.splitlines(), np.fromfile(data)


def build(run, tmp_path, *more, check=0):
    return run.json("build", "--only", "host", "--python", PYTHON, "--cache-dir", tmp_path / "cache", *more,
                    tmp_path / "src", check=check)


def cache_library(tmp_path):
    (library,) = (tmp_path / "cache").rglob("ab_kernels.ck-host.so")
    return library


def test_a_bundle_serves_each_kernel_its_own_library_after_one_it_cannot_call(run, tmp_path):
    make_tree(tmp_path / "src")
    build(run, tmp_path)
    bundle = tmp_path / "fl.ckb"
    run("bundle", "--output", bundle, "--python", PYTHON, "--cache-dir", tmp_path / "cache", tmp_path / "src",
        check=0)
    lines, x = call_ab(tmp_path, "--bundle", bundle)
    assert "ab: pyccel" in lines, lines
    assert list(x) == list(VALUES * 3), lines
    assert any("kernel 'aa'" in line and "not callable from C++" in line for line in lines), lines

    # The bundle knows its host module's source: an edit makes it stale.
    source = tmp_path / "src/fl/kernels/ab/ab_kernels.py"
    source.write_text(source.read_text() + "\n# edited\n")
    status, _ = run.json("status", "--bundle", bundle, "--python", PYTHON, "--cache-dir", tmp_path / "cache",
                         tmp_path / "src", check=1)
    assert status["changed"] == ["fl.kernels.ab"], status
    (ab,) = [k for k in status["kernels"] if k["name"] == "ab"]
    (host,) = [a for a in ab["artifacts"] if a["target"] == "host-library"]
    assert host["state"] == "changed" and host["reason"] == f"{source} changed since the bundle was made", host


def damage(library, how, other):
    """Truncates the library, zeroes its second half (same size) or replaces it with `other`."""
    size = library.stat().st_size
    if how == "replaced":
        library.write_bytes(other.read_bytes())
        return
    with open(library, "r+b") as file:
        if how == "zero-tail":
            file.seek(size // 2)
            file.write(bytes(size - size // 2))
        else:
            file.truncate(int(how))


@pytest.mark.parametrize("how", ["1", "1000", "zero-tail"])
def test_a_damaged_cache_library_is_named_never_loaded_and_repaired(run, tmp_path, how):
    make_tree(tmp_path / "src")
    build(run, tmp_path)
    library = cache_library(tmp_path)
    damage(library, how, None)

    lines, x = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    assert list(x) == list(VALUES), lines
    (warning,) = [line for line in lines if line.startswith("warning: kernel 'ab'")]
    (error,) = [line for line in lines if line.startswith("ab: error:")]
    if how == "zero-tail":
        assert f"{library} differs from its manifest" in warning, warning
    else:
        assert "artifact fl/kernels/ab/ab_kernels.ck-host.so is missing or truncated" in warning, warning
    assert warning.endswith("run `cunumpy-kernels cache verify --fix`, then `cunumpy-kernels build`"), warning
    assert "has no host kernel attached and no Pyccel version from the cache (" in error, error

    if how != "zero-tail":  # status reads the library in place without hashing it (cache verify does)
        status, _ = run.json("status", "--only", "host", "--python", PYTHON, "--cache-dir", tmp_path / "cache",
                             tmp_path / "src", check=None)
        (ab,) = [k for k in status["kernels"] if k["name"] == "ab"]
        assert ab["host_library"]["callable"] is False
        said = {"1": "is no ELF file (damaged)", "1000": "is truncated (1000 bytes"}[how]
        assert f"{library} {said}" in ab["host_library"]["reason"], ab
    run("cache", "verify", "--fix", "--cache-dir", tmp_path / "cache", check=None)
    report, _ = build(run, tmp_path, check=None)
    assert "fl.kernels.ab.ab_kernels" in [job["host_module"] for job in jobs_by_state(report, "built")], report
    lines, x = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    assert list(x) == list(VALUES * 3), lines


@pytest.mark.parametrize("how", ["0", "1", "1000", "zero-tail", "replaced"])
def test_a_damaged_in_place_library_is_named_never_loaded_and_rebuilt(run, tmp_path, how):
    make_tree(tmp_path / "src")
    build(run, tmp_path, "--in-place")
    kernels = tmp_path / "src/fl/kernels"
    library = kernels / "ab/ab_kernels.ck-host.so"
    damage(library, how, kernels / "aa/aa_kernels.ck-host.so")  # aa's module has an `ab` that writes -1

    lines, x = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    assert list(x) == list(VALUES), lines
    (warning,) = [line for line in lines if line.startswith("warning: kernel 'ab'")]
    assert warning.endswith(f"{library} changed since `build --in-place` made it (damaged or replaced); "
                            "run `cunumpy-kernels build --in-place`"), warning
    dry, _ = build(run, tmp_path, "--in-place", "--dry-run", check=None)
    reasons = {job["host_module"]: job.get("reason") for job in dry["jobs"] if job["state"] == "would-build"}
    assert reasons == {"fl.kernels.ab.ab_kernels":
                       "ab_kernels.ck-host.so of its build changed since (damaged or replaced)"}, dry
    bundle = tmp_path / "fl.ckb"
    run("bundle", "--output", bundle, "--python", PYTHON, "--cache-dir", tmp_path / "cache", tmp_path / "src",
        check=0)
    lines, x = call_ab(tmp_path, "--bundle", bundle)
    assert list(x) == list(VALUES), lines
    assert any("changed since `build --in-place` made it" in line for line in lines), lines

    build(run, tmp_path, "--in-place")
    lines, x = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    assert list(x) == list(VALUES * 3), lines


def test_an_in_place_library_rebuilt_while_a_process_runs_is_served_anew(run, tmp_path):
    """The loader knows a library by its path and never unloads ours: the rebuilt file at the same path
    must not be served with the old code by a catalog opened after the rebuild."""
    make_tree(tmp_path / "src")
    build(run, tmp_path, "--in-place")
    source = tmp_path / "src/fl/kernels/ab/ab_kernels.py"
    edited = tmp_path / "ab_kernels.edited"
    edited.write_text(source.read_text().replace("x[i] * a", "x[i] * a + 100.0"))
    data = tmp_path / "x"
    VALUES.tofile(data)
    call = (f"call {tmp_path / 'src/fl/kernels'} ab\narray float64 {data} 1 {VALUES.size} 1\n"
            f"scalar float64 {(3.0).hex()}\nend\n")
    rebuild = (f"shell cp {edited} {source} && {CLI} build --in-place --only host --python {PYTHON} "
               f"--cache-dir {tmp_path / 'cache'} {tmp_path / 'src'} > /dev/null\n")
    calls = tmp_path / "calls"
    calls.write_text(call + rebuild + "reopen\n" + call)
    result = subprocess.run([APP, tmp_path / "src", tmp_path / "cache", calls], capture_output=True, text=True,
                            timeout=300)
    assert result.stdout.splitlines().count("ab: pyccel") == 2, result.stdout + result.stderr
    assert list(np.fromfile(data)) == list(VALUES * 9 + 100.0), result.stdout


def test_an_edited_in_place_module_says_to_build_in_place(run, tmp_path):
    make_tree(tmp_path / "src")
    build(run, tmp_path, "--in-place")
    source = tmp_path / "src/fl/kernels/ab/ab_kernels.py"
    source.write_text(source.read_text() + "\n# edited\n")
    lines, _ = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    (error,) = [line for line in lines if line.startswith("ab: error:")]
    assert f"({source} changed since its in-place build; run `cunumpy-kernels build --in-place`)" in error, error


def test_a_removed_library_makes_its_entry_a_miss_that_build_repairs(run, tmp_path):
    make_tree(tmp_path / "src")
    build(run, tmp_path)
    cache_library(tmp_path).unlink()
    lines, _ = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    assert any("kernel 'ab'" in line and "ab_kernels.ck-host.so is missing or truncated" in line
               for line in lines), lines
    status = run("status", "--only", "host", "--require-built", "--python", PYTHON, "--cache-dir",
                 tmp_path / "cache", tmp_path / "src", check=None)
    assert status.returncode != 0, status.stdout
    report, _ = build(run, tmp_path)
    states = {job["host_module"]: job["state"] for job in report["jobs"]}
    assert states == {"fl.kernels.aa.aa_kernels": "hit", "fl.kernels.ab.ab_kernels": "built"}, states
    lines, x = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    assert list(x) == list(VALUES * 3), lines


def test_a_call_that_finds_no_pyccel_version_says_why(run, tmp_path):
    make_tree(tmp_path / "src")
    lines, _ = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    (error,) = [line for line in lines if line.startswith("ab: error:")]
    assert f"the cache {tmp_path / 'cache'}" in error and "holds no build of fl.kernels.ab; run `cunumpy-kernels build`" \
        in error, error
    assert not any(line.startswith("warning:") for line in lines), lines  # an application may attach its own

    build(run, tmp_path)
    source = tmp_path / "src/fl/kernels/ab/ab_kernels.py"
    source.write_text(source.read_text() + "\n# edited\n")
    lines, _ = call_ab(tmp_path, tmp_path / "src", tmp_path / "cache")
    (error,) = [line for line in lines if line.startswith("ab: error:")]
    assert f"({source} changed since its last build; run `cunumpy-kernels build`)" in error, error
