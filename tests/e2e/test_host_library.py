"""Host libraries (doc/host-libraries.md): `build` links each host module, from
Pyccel's C or Fortran backend, into a Python-free shared library, and a C++
program that attaches no host kernel runs the cached Pyccel versions with the
Python extension's results, bit for bit.
"""

import hashlib
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import PYTHON

APP = os.environ.get("CUNUMPY_KERNELS_HOST_LIBRARY_APP")

DT, LENGTH, N_CELLS = 0.05, 1.0, 64


def has_pyccel():
    result = subprocess.run([PYTHON, "-c", "import pyccel"], capture_output=True)
    return result.returncode == 0


needs_toolchain = pytest.mark.skipif(
    not has_pyccel() or shutil.which("gcc") is None or shutil.which("gfortran") is None,
    reason="Pyccel, gcc or gfortran is not installed"
)

# Both of Pyccel's backends: the library's entries have one ABI.
languages = pytest.mark.parametrize("language", ["c", "fortran"])


def build_host(run, example, cache, *extra):
    report, result = run.json("build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, *extra, example)
    assert result.returncode == 0, result.stdout + result.stderr
    return [job for job in report["jobs"] if job["target"] == "host"]


def python_results(example, cache_entries, data):
    """The Python extensions' results on the same inputs, loaded from the entries the build published."""
    program = textwrap.dedent(
        """
        import importlib.util, json, sys
        import numpy as np
        entries, data = json.loads(sys.argv[1]), sys.argv[2]
        def load(name):
            spec = importlib.util.spec_from_file_location(name, entries[name])
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
        x = np.fromfile(data + "/x"); v = np.fromfile(data + "/v"); e = np.fromfile(data + "/e")
        w = np.fromfile(data + "/w"); n = x.size; x0 = x.copy()
        load("push_kernels").push(x, v, e, %r, %r, n)
        rho = np.zeros(%d)
        load("deposit_kernels").deposit(x0, w, rho, %r / %d, n, %d)
        order = np.zeros(n, dtype=np.int64); counts = np.zeros(%d, dtype=np.int64)
        load("sort_kernels").sort(x0, %r / %d, order, counts, n, %d)
        for name, values in {"x": x, "v": v, "rho": rho, "order": order, "counts": counts}.items():
            values.tofile(data + "/py_" + name)
        """
        % (DT, LENGTH, N_CELLS, LENGTH, N_CELLS, N_CELLS, N_CELLS, LENGTH, N_CELLS, N_CELLS)
    )
    result = subprocess.run([PYTHON, "-c", program, json.dumps(cache_entries), str(data)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@needs_toolchain
@languages
def test_each_host_module_gets_a_python_free_library_in_its_entry(run, example, tmp_path, language):
    jobs = build_host(run, example, tmp_path / "cache", "--language", language)
    assert len(jobs) == 3
    for job in jobs:
        manifest = json.loads((Path(job["entry"]) / "manifest.json").read_text())
        libraries = [a for a in manifest["artifacts"] if a["target"] == "host-library"]
        assert len(libraries) == 1, manifest["artifacts"]
        stem = job["host_module"].rsplit(".", 1)[1]
        library = Path(job["entry"]) / libraries[0]["file"]
        assert library.name == stem + ".ck-host.so"
        needed = subprocess.run(["readelf", "-d", library], capture_output=True, text=True).stdout
        assert "libpython" not in needed
        local = subprocess.run(["nm", library], capture_output=True, text=True).stdout
        assert (f" bind_c_{job['kernel']}\n" in local) == (language == "fortran"), local  # Pyccel's bind_c wrapper
        symbols = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True).stdout
        exported = sorted(line.split()[-1] for line in symbols.splitlines() if line.strip())
        kernel = job["kernel"]
        assert exported == sorted(["ck_host_abi_version", "ck_host_description", f"ck_host__{kernel}"])
    verify = run("cache", "verify", "--cache-dir", tmp_path / "cache")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def class_tree(root):
    """A tree with a kernel taking a Pyccel class (no C++ entry) and one taking an array (one)."""
    files = {
        "sim/__init__.py": "",
        "sim/util/__init__.py": "",
        "sim/util/args_kernels.py": """
            class Args:
                def __init__(self, scale: float):
                    self.scale = scale
            """,
        "sim/kernels/__init__.py": "",
        "sim/kernels/scale/scale_kernels.py": """
            from sim.util.args_kernels import Args


            def scale(args: 'Args', out: 'float[:]'):
                out[0] = args.scale
            """,
        "sim/kernels/twice/twice_kernels.py": """
            def twice(out: 'float[:]'):
                out[0] = 2 * out[0]
            """,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


SCALE_REASON = "parameter 'args': type 'Args' is not a NumPy scalar or array type"


@needs_toolchain
def test_a_kernel_taking_a_class_is_listed_not_failed_and_named_by_status(run, tmp_path):
    root = class_tree(tmp_path / "simcode")
    cache = tmp_path / "cache"
    report, result = run.json("build", "--only", "host", "-v", "--python", PYTHON, "--cache-dir", cache, root)
    assert result.returncode == 0, result.stdout + result.stderr
    (scale,) = [job for job in report["jobs"] if job["kernel"] == "scale"]
    assert scale["state"] == "built"
    manifest = json.loads((Path(scale["entry"]) / "manifest.json").read_text())
    assert "host library: not callable from C++: kernel 'scale': " + SCALE_REASON in manifest["log"]

    status, result = run.json("status", "--only", "host", "--python", PYTHON, "--cache-dir", cache, root, check=0)
    libraries = {k["name"]: k["host_library"] for k in status["kernels"]}
    assert libraries["twice"] == {"callable": True, "reason": ""}, status
    assert libraries["scale"]["callable"] is False
    assert libraries["scale"]["reason"] == "its Pyccel version is not callable from C++: " + SCALE_REASON
    text = run("status", "--only", "host", "--python", PYTHON, "--cache-dir", cache, root, check=0).stdout
    lines = text.splitlines()
    section = lines.index("host libraries (the Pyccel versions the runtime calls):")
    assert lines[section + 1:] == ["  sim.kernels.scale: its Pyccel version is not callable from C++: " + SCALE_REASON]

    # Edited, the kernel's entry is stale: no library to look at, nothing named.
    kernel = root / "sim" / "kernels" / "scale" / "scale_kernels.py"
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    status, _ = run.json("status", "--only", "host", "--python", PYTHON, "--cache-dir", cache, root, check=0)
    assert {k["name"]: k["host_library"] for k in status["kernels"]}["scale"] is None


@needs_toolchain
@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_HOST_LIBRARY_APP is not set (run through meson)")
def test_the_catalog_names_a_kernel_it_cannot_call_when_it_opens(run, tmp_path):
    root = class_tree(tmp_path / "simcode")
    cache = tmp_path / "cache"
    build_host(run, root, cache)
    result = subprocess.run([APP, "--open", root, root / "sim" / "kernels", cache],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "warning: kernel 'scale': the cache's Pyccel version is not attached: its Pyccel version is not callable from C++: " \
           + SCALE_REASON in lines, lines
    assert "scale: []" in lines and "twice: [pyccel]" in lines, lines


@needs_toolchain
@languages
@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_HOST_LIBRARY_APP is not set (run through meson)")
def test_a_cpp_program_runs_the_cached_pyccel_kernels_bit_identical_to_python(run, example, tmp_path, language):
    cache = tmp_path / "cache"
    jobs = build_host(run, example, cache, "--language", language)
    entries = {job["host_module"].rsplit(".", 1)[1]: job["artifacts"][0] for job in jobs}
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(42)
    n = 1000
    rng.uniform(0.0, LENGTH, n).tofile(data / "x")
    rng.normal(0.0, 1.0, n).tofile(data / "v")
    rng.normal(0.0, 3.0, n).tofile(data / "e")
    rng.uniform(0.5, 1.5, n).tofile(data / "w")
    python_results(example, entries, data)
    env = dict(run.env, LD_LIBRARY_PATH="")
    result = subprocess.run([APP, example, cache, data], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for kernel in ("push", "deposit", "sort"):
        assert any(line.startswith(f"{kernel}: pyccel") and line.endswith("selected pyccel") for line in lines), lines
    for name, cpp in {"x": "push_x", "v": "push_v", "rho": "rho", "order": "order", "counts": "counts"}.items():
        assert (data / cpp).read_bytes() == (data / f"py_{name}").read_bytes(), name
    assert "float32 x: kernel 'push' (host implementation 'pyccel'): argument x: expected a 1D float64 array, " \
           "got a 1D float32 array" in lines
    assert any(line.startswith("float n: ") and "argument n" in line for line in lines), lines
    assert "empty x: kernel 'push' (host implementation 'pyccel'): argument x: dimension 0 has size 0; " \
           "Pyccel's arrays may not be empty" in lines
    assert "attached: host,cuda selected host ran own" in lines


@needs_toolchain
@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_HOST_LIBRARY_APP is not set (run through meson)")
def test_an_edited_kernel_is_not_served_by_its_stale_library(run, example, tmp_path):
    cache = tmp_path / "cache"
    build_host(run, example, cache)
    push = example / "particles" / "kernels" / "push" / "push_kernels.py"
    push.write_text(push.read_text() + "\n# edited\n")
    data = tmp_path / "data"
    data.mkdir()
    for name in ("x", "v", "e", "w"):
        np.full(8, 0.5).tofile(data / name)
    result = subprocess.run([APP, example, cache, data], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "kernel 'push' has no host kernel attached" in result.stderr


GRID_KERNEL = '''
"""OpenMP over a 2D grid: a parallel loop with an integer reduction, and the runtime."""
from pyccel.stdlib.internal.openmp import omp_get_max_threads


def scale(a: 'float[:,:]', b: 'float[:,:](order=F)', s: float, counts: 'int64[:]'):
    n0, n1 = a.shape
    total = 0
    #$ omp parallel for reduction(+:total)
    for i in range(n0):
        for j in range(n1):
            a[i, j] = a[i, j] * s + b[i, j]
            if a[i, j] > 0.0:
                total += 1
    counts[0] = total
    counts[1] = omp_get_max_threads()
'''

GRID_ROWS, GRID_COLUMNS = 40, 32  # as host_library_app.cpp's --grid


def openmp_tree(root):
    """A package whose one kernel uses Pyccel's OpenMP pragmas, built with `openmp = true`."""
    files = {
        "pyproject.toml": "[tool.cunumpy-kernels]\nopenmp = true\n",
        "omp/__init__.py": "",
        "omp/kernels/__init__.py": "",
        "omp/kernels/scale/scale_kernels.py": GRID_KERNEL,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip())
    return root


@needs_toolchain
@languages
@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_HOST_LIBRARY_APP is not set (run through meson)")
def test_an_openmp_kernel_links_loads_and_equals_python_on_views(run, tmp_path, language):
    root = openmp_tree(tmp_path / "ompcode")
    cache = tmp_path / "cache"
    (job,) = build_host(run, root, cache, "--language", language)
    manifest = json.loads((Path(job["entry"]) / "manifest.json").read_text())
    assert manifest["inputs"]["openmp"] is True
    (library,) = [Path(job["entry"]) / a["file"] for a in manifest["artifacts"] if a["target"] == "host-library"]
    needed = subprocess.run(["readelf", "-d", library], capture_output=True, text=True).stdout
    assert "libgomp" in needed and "libpython" not in needed, needed

    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(7)
    rng.normal(0.0, 1.0, (GRID_ROWS, 2 * GRID_COLUMNS)).tofile(data / "grid_a")
    rng.normal(0.0, 1.0, GRID_ROWS * GRID_COLUMNS).tofile(data / "grid_b")  # read in Fortran order
    program = textwrap.dedent(
        """
        import importlib.util, sys
        import numpy as np
        spec = importlib.util.spec_from_file_location("scale_kernels", sys.argv[1])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        a = np.fromfile(sys.argv[2] + "/grid_a").reshape(%d, %d)
        b = np.fromfile(sys.argv[2] + "/grid_b").reshape(%d, %d, order="F")
        counts = np.zeros(2, dtype=np.int64)
        module.scale(a[:, ::2], b, 2.0, counts)
        a.tofile(sys.argv[2] + "/py_grid_a")
        counts.tofile(sys.argv[2] + "/py_grid_counts")
        """
        % (GRID_ROWS, 2 * GRID_COLUMNS, GRID_ROWS, GRID_COLUMNS)
    )
    env = dict(run.env, OMP_NUM_THREADS="2", LD_LIBRARY_PATH="")
    result = subprocess.run([PYTHON, "-c", program, job["artifacts"][0], data], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    result = subprocess.run([APP, "--grid", root, root / "omp" / "kernels", cache, data], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "scale: pyccel" in result.stdout.splitlines(), result.stdout
    for name in ("grid_a", "grid_counts"):
        assert (data / name).read_bytes() == (data / f"py_{name}").read_bytes(), name
    counts = np.fromfile(data / "grid_counts", dtype=np.int64)
    assert counts[0] > 0 and counts[1] == 2, counts
    # OpenMP's idle threads outlive the call: the program still exits cleanly,
    # each time (the catalog never unloads a host library under them).
    for _ in range(10):
        again = subprocess.run([APP, "--grid", root, root / "omp" / "kernels", cache, data], env=env,
                               capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr


@needs_toolchain
@languages
@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_HOST_LIBRARY_APP is not set (run through meson)")
def test_an_in_place_build_serves_the_catalog_where_no_cache_entry_does(run, example, tmp_path, language):
    run("build", "--in-place", "--only", "host", "--language", language, "--python", PYTHON,
        "--cache-dir", tmp_path / "scratch-cache", example)
    extensions = {path.name.split(".", 1)[0]: str(path) for path in example.rglob("*_kernels.cpython-*.so")}
    assert sorted(extensions) == ["deposit_kernels", "push_kernels", "sort_kernels"], extensions
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(3)
    n = 500
    rng.uniform(0.0, LENGTH, n).tofile(data / "x")
    rng.normal(0.0, 1.0, n).tofile(data / "v")
    rng.normal(0.0, 3.0, n).tofile(data / "e")
    rng.uniform(0.5, 1.5, n).tofile(data / "w")
    python_results(example, extensions, data)
    empty_cache = tmp_path / "empty-cache"  # no entry: only the in-place builds can serve
    result = subprocess.run([APP, example, empty_cache, data], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for kernel in ("push", "deposit", "sort"):
        assert any(line.startswith(f"{kernel}: pyccel") and line.endswith("selected pyccel") for line in lines), lines
    for name, cpp in {"x": "push_x", "v": "push_v", "rho": "rho", "order": "order", "counts": "counts"}.items():
        assert (data / cpp).read_bytes() == (data / f"py_{name}").read_bytes(), name

    # Edited, the module's in-place record no longer holds its source digest: not served.
    push = example / "particles" / "kernels" / "push" / "push_kernels.py"
    push.write_text(push.read_text() + "\n# edited\n")
    result = subprocess.run([APP, example, empty_cache, data], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "kernel 'push' has no host kernel attached" in result.stderr


def example_data(data, n, seed):
    data.mkdir()
    rng = np.random.default_rng(seed)
    rng.uniform(0.0, LENGTH, n).tofile(data / "x")
    rng.normal(0.0, 1.0, n).tofile(data / "v")
    rng.normal(0.0, 3.0, n).tofile(data / "e")
    rng.uniform(0.5, 1.5, n).tofile(data / "w")


@needs_toolchain
@pytest.mark.skipif(not APP, reason="CUNUMPY_KERNELS_HOST_LIBRARY_APP is not set (run through meson)")
def test_a_bundle_carries_the_host_libraries_and_a_rank_runs_them_without_tree_or_cache(run, example, tmp_path):
    from test_bundle import cunumpy_include_dir, read_header, rewrite_header

    flags = ["--cache-dir", tmp_path / "cache", "--cunumpy-include-dir", cunumpy_include_dir()]
    run("build", "--only", "cuda", *flags, example, check=0)
    bundle = tmp_path / "kernels.ckb"

    # Before any host build: every kernel is bundled, each saying why it has no host library.
    run("bundle", "--output", bundle, *flags, example, check=0)
    header, _ = read_header(bundle)
    for kernel in header["kernels"]:
        assert kernel["host_library"] is None
        assert "run cunumpy-kernels build --only host" in kernel["host_library_note"], kernel

    jobs = build_host(run, example, tmp_path / "cache")
    entries = {job["host_module"].rsplit(".", 1)[1]: job["artifacts"][0] for job in jobs}
    run("bundle", "--output", bundle, *flags, example, check=0)
    header, blob = read_header(bundle)
    assert header["host_platform"] == f"{os.uname().sysname}-{os.uname().machine}".lower()
    for kernel in header["kernels"]:
        library = kernel["host_library"]
        assert library["target"] == "host-library" and kernel["host_library_note"] == "", kernel
        assert hashlib.sha256(blob[library["offset"]:library["offset"] + library["size"]]).hexdigest() \
            == library["sha256"]
    data = tmp_path / "data"
    example_data(data, 700, 11)
    python_results(example, entries, data)
    (tmp_path / "particles").rename(tmp_path / "moved")
    (tmp_path / "cache").rename(tmp_path / "cache-moved")
    env = dict(run.env, LD_LIBRARY_PATH="")
    result = subprocess.run([APP, "--bundle", bundle, data], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for kernel in ("push", "deposit", "sort"):
        assert any(line.startswith(f"{kernel}: pyccel") and line.endswith("selected pyccel") for line in lines), lines
    for name, cpp in {"x": "push_x", "v": "push_v", "rho": "rho", "order": "order", "counts": "counts"}.items():
        assert (data / cpp).read_bytes() == (data / f"py_{name}").read_bytes(), name

    # Another platform's bundle: its libraries are not loaded, and each kernel says why.
    rewrite_header(bundle, lambda header, blob: header.update(host_platform="linux-ppc64le"))
    result = subprocess.run([APP, "--bundle", bundle, data], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "warning: kernel 'push': the bundle's Pyccel version is not attached: the bundle's host libraries are for linux-ppc64le" \
        in result.stdout, result.stdout
    assert "has no host kernel attached" in result.stderr
