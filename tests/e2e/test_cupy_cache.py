"""`build --cupy-cache` fills CuPy's kernel cache as cunumpy's first CUDA call would.

These run without a GPU, with the CuPy of the tests' interpreter (the
project's .venv). That the entries are exactly the ones cunumpy's own call
reads, with zero compiles, is shown on a GPU by tests/gpu/cupy_cache_proof.py
(figures in bench/RESULTS.md); here: what is written, when it is a hit, what
makes it a miss (cunumpy's options), and what happens without CuPy.
"""

import hashlib
import json
from pathlib import Path

import pytest

from conftest import PYTHON, jobs_by_state

pytest.importorskip("cupy", reason="CuPy is in requirements-dev.txt; scripts/setup installs it")

ARCH = ["--arch", "sm_90", "--no-ptx"]


def cupy_jobs(report, state=None):
    return [j for j in report["jobs"] if j["kind"] == "cupy" and (state is None or j["state"] == state)]


def fill(run, example, cupy_dir, *extra, check=0, env=None, arch=ARCH):
    return run.json("build", "--only", "cupy", *arch, "--cupy-cache-dir", cupy_dir, "--python", PYTHON, *extra,
                    example, cwd=example.parent, check=check, env=env)


def cupy_status(run, example, cupy_dir, env=None):
    report, _ = run.json("status", "--only", "cupy", *ARCH, "--cupy-cache-dir", cupy_dir, "--python", PYTHON,
                         example, cwd=example.parent, check=0, env=env)
    return {k["name"]: [(a["target"], a["state"]) for a in k["artifacts"] if a["kind"] == "cupy"]
            for k in report["kernels"]}


def test_each_cuda_kernel_gets_one_valid_cupy_entry_per_compute_capability(run, example, tmp_path):
    cupy_dir = tmp_path / "cupy"
    report, _ = fill(run, example, cupy_dir, arch=["--arch", "sm_80,sm_90", "--ptx"])
    built = cupy_jobs(report, "built")
    assert sorted((j["kernel"], j["target"]) for j in built) == [
        ("deposit", "sm_80"), ("deposit", "sm_90"), ("push", "sm_80"), ("push", "sm_90")]
    assert report["cupy"]["cupy_version"].startswith("14.") and report["cupy"]["cache_dir"] == str(cupy_dir)
    files = sorted(p.name for p in cupy_dir.iterdir())
    assert files == sorted(Path(j["artifacts"][0]).name for j in built)
    for job in built:
        data = Path(job["artifacts"][0]).read_bytes()
        # CuPy's on-disk format: the SHA-1 of the cubin in hex, then the cubin.
        assert data[:40] == hashlib.sha1(data[40:]).hexdigest().encode()
        assert data[40:44] == b"\x7fELF"
        assert Path(job["artifacts"][0]).name == job["key"] + ".cubin"
    # The tool's own cache is not touched by --only cupy.
    assert not [j for j in report["jobs"] if j["kind"] != "cupy"]


def test_a_second_fill_hits_and_compiles_nothing(run, example, tmp_path):
    cupy_dir = tmp_path / "cupy"
    fill(run, example, cupy_dir)
    before = {p.name: p.stat().st_mtime_ns for p in cupy_dir.iterdir()}
    report, _ = fill(run, example, cupy_dir)
    assert len(cupy_jobs(report, "hit")) == 2 and not cupy_jobs(report, "built")
    assert {p.name: p.stat().st_mtime_ns for p in cupy_dir.iterdir()} == before


def test_status_reads_cupy_cache_without_compiling(run, example, tmp_path):
    cupy_dir = tmp_path / "cupy"
    assert cupy_status(run, example, cupy_dir) == {
        "deposit": [("sm_90", "missing")], "push": [("sm_90", "missing")], "sort": []}
    assert not list(cupy_dir.glob("*.cubin"))
    fill(run, example, cupy_dir)
    assert cupy_status(run, example, cupy_dir) == {
        "deposit": [("sm_90", "built")], "push": [("sm_90", "built")], "sort": []}


def test_dry_run_lists_what_cupy_would_compile(run, example, tmp_path):
    cupy_dir = tmp_path / "cupy"
    report, _ = fill(run, example, cupy_dir, "--dry-run")
    assert len(cupy_jobs(report, "would-build")) == 2
    assert not list(cupy_dir.glob("*.cubin"))


def test_a_changed_header_misses_as_cunumpy_include_hash_does(run, example, tmp_path):
    """cunumpy adds -DCUNUMPY_INCLUDE_HASH of the included headers: editing one is a new CuPy key."""
    cupy_dir = tmp_path / "cupy"
    fill(run, example, cupy_dir)
    header = example / "particles" / "kernels" / "common.cuh"
    header.write_text(header.read_text() + "\n// edited\n")
    assert cupy_status(run, example, cupy_dir) == {
        "deposit": [("sm_90", "missing")], "push": [("sm_90", "missing")], "sort": []}
    report, _ = fill(run, example, cupy_dir)
    assert len(cupy_jobs(report, "built")) == 2


def test_debug_mode_and_options_are_part_of_the_key(run, example, tmp_path):
    """CUNUMPY_CUDA_DEBUG adds cunumpy's debug options; `options` are the user's: both change CuPy's key."""
    cupy_dir = tmp_path / "cupy"
    fill(run, example, cupy_dir)
    assert set(cupy_status(run, example, cupy_dir, env={"CUNUMPY_CUDA_DEBUG": "1"})["push"]) == {("sm_90", "missing")}
    report, _ = fill(run, example, cupy_dir, env={"CUNUMPY_CUDA_DEBUG": "1"})
    assert len(cupy_jobs(report, "built")) == 2
    assert set(cupy_status(run, example, cupy_dir, env={"CUNUMPY_CUDA_DEBUG": "1"})["push"]) == {("sm_90", "built")}
    report, _ = fill(run, example, cupy_dir, "--compiler-option=-DEXTRA=1")
    assert len(cupy_jobs(report, "built")) == 2


def test_a_kernel_nvrtc_rejects_fails_alone_with_its_log(run, example, tmp_path):
    cupy_dir = tmp_path / "cupy"
    source = example / "particles" / "kernels" / "push" / "push_cuda.cu"
    source.write_text(source.read_text() + "\nthis is not C++;\n")
    report, result = fill(run, example, cupy_dir, check=1)
    (failed,) = cupy_jobs(report, "failed")
    assert failed["kernel"] == "push"
    # NVRTC's message names the kernel's own file, not CuPy's temporary copy
    assert f"{source}(" in failed["log"] and "error" in failed["log"]
    assert failed["log"].count(f'{source}"') == failed["log"].count(f'"{source}"')  # quotes stay paired
    assert [j["kernel"] for j in cupy_jobs(report, "built")] == ["deposit"]
    assert not report["ok"]
    # status, which compiles nothing, remembers the failure; a fixed source forgets it
    assert cupy_status(run, example, cupy_dir)["push"] == [("sm_90", "failed")]
    source.write_text(source.read_text().replace("this is not C++;", ""))
    fill(run, example, cupy_dir)
    assert cupy_status(run, example, cupy_dir)["push"] == [("sm_90", "built")]


def test_arch_specific_targets_are_the_devices_capability(run, example, tmp_path):
    report, _ = fill(run, example, tmp_path / "cupy", arch=["--arch", "sm_90a,compute_90", "--no-ptx"])
    assert sorted(j["target"] for j in cupy_jobs(report, "built")) == ["sm_90", "sm_90"]


def cupy_key(source, name, source_root, options):
    """CuPy's entry name for cunumpy's kernel, worked out here through another CuPy door than the tool's
    (core.compile_with_cache with an explicit architecture), stopping at the cache lookup."""
    from cunumpy._cuda_kernel import CudaKernel
    from cupy._core import core
    from cupy.cuda import compiler

    kernel = CudaKernel.from_file(source, name, include_dirs=(source_root,), options=options)

    class Asked(Exception):
        pass

    class Lookup:
        def load(self, entry):
            raise Asked(entry)

    saved = compiler._kernel_cache_backend, compiler._get_arch_for_options_for_nvrtc
    compiler._kernel_cache_backend = Lookup()
    compiler._get_arch_for_options_for_nvrtc = saved[1].__wrapped__
    try:
        core.compile_with_cache(kernel.source, tuple(kernel.compile_options()), arch="90", prepend_cupy_headers=False)
    except Asked as asked:
        return str(asked.args[0])
    finally:
        compiler._kernel_cache_backend, compiler._get_arch_for_options_for_nvrtc = saved
    raise AssertionError("CuPy did not look its cache up")


def test_options_reach_cunumpy_as_written(run, example, tmp_path):
    """`options` are what the application passes to cunumpy's options=: CuPy's key holds their words."""
    (example.parent / "inc").mkdir()
    pyproject = example.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        "[tool.cunumpy-kernels]", '[tool.cunumpy-kernels]\noptions = ["-I../inc", "-DX=1"]'))
    report, _ = fill(run, example, tmp_path / "cupy", "--compiler-option=-I ../inc")
    push = next(j for j in cupy_jobs(report, "built") if j["kernel"] == "push")
    source = example / "particles" / "kernels" / "push" / "push_cuda.cu"
    expected = cupy_key(source, "push", example, ("-I../inc", "-DX=1", "-I ../inc"))
    assert Path(push["artifacts"][0]).name == expected


def test_template_kernels_use_their_name_expression(run, tmp_path):
    from test_template_kernels import template_tree

    tree = template_tree(tmp_path / "tree", ["float"])
    cupy_dir = tmp_path / "cupy"
    report, _ = run.json("build", "--only", "cupy", *ARCH, "--cupy-cache-dir", cupy_dir, "--python", PYTHON,
                         tree / "pkg", cwd=tree, check=0)
    (job,) = cupy_jobs(report, "built")
    # CuPy stores the lowered names of a RawModule's name expressions ahead of the cubin.
    assert b"_Z5scaleIfEvPT_S0_i" in Path(job["artifacts"][0]).read_bytes()


def test_without_cupy_the_rest_of_build_proceeds_and_says_why(run, example, tmp_path):
    cupy_dir = tmp_path / "cupy"
    base = Path("/usr/bin/python3")  # the base interpreter the .venv was made from: no CuPy
    import cunumpy

    headers = Path(cunumpy.__file__).parent / "cuda" / "include"  # the tool's own build finds them without Python
    report, result = run.json("build", "--only", "cuda", *ARCH, "--cupy-cache-dir", cupy_dir, "--python", base,
                              "--cunumpy-include-dir", headers, example, cwd=example.parent, check=1)
    assert len(jobs_by_state(report, "built")) == 2  # the tool's own cubins
    assert "CuPy cannot be imported" in report["cupy"]["unavailable"]
    assert "pip install cupy" in result.stderr and "/usr/bin/python3" in result.stderr
    assert not cupy_dir.exists()
    # status says the same per kernel, as "unknown"
    status, _ = run.json("status", "--only", "cupy", *ARCH, "--cupy-cache-dir", cupy_dir, "--python", base,
                         example, cwd=example.parent, check=0)
    states = {a["state"] for k in status["kernels"] for a in k["artifacts"] if a["kind"] == "cupy"}
    assert states == {"unknown"}


def test_an_unsupported_cupy_an_in_memory_cache_or_a_file_in_the_way_is_named(run, example, tmp_path):
    fake = tmp_path / "fake"
    for module in ("cupy/__init__.py", "cupy/_core/__init__.py", "cupy/_core/raw.py", "cupy/cuda/__init__.py",
                   "cupy/cuda/compiler.py", "cupy/cuda/nvrtc.py"):
        (fake / module).parent.mkdir(parents=True, exist_ok=True)
        (fake / module).write_text('__version__ = "13.0.0"\n' if module == "cupy/__init__.py" else "")
    report, _ = fill(run, example, tmp_path / "cupy", check=1, env={"PYTHONPATH": str(fake)})
    assert "CuPy 13.0.0 is not supported" in report["cupy"]["unavailable"]
    report, _ = fill(run, example, tmp_path / "cupy", check=1, env={"CUPY_CACHE_IN_MEMORY": "1"})
    assert "CUPY_CACHE_IN_MEMORY" in report["cupy"]["unavailable"]
    assert "NVRTC ;" not in result_text(run, example, tmp_path, {"CUPY_CACHE_IN_MEMORY": "1"})
    # CuPy reads only "1" as in memory: other values keep its disk cache
    report, _ = fill(run, example, tmp_path / "cupy", env={"CUPY_CACHE_IN_MEMORY": "false"})
    assert len(cupy_jobs(report, "built")) == 2
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("")
    result = run("build", "--only", "cupy", "--cupy-cache-dir", in_the_way, "--python", PYTHON, example,
                 cwd=example.parent, check=2)
    assert "is not a folder" in result.stderr
    for command in ("build", "status"):
        result = run(command, "--only", "cupy", "--cupy-cache-dir", "", example, cwd=example.parent, check=2)
        assert "--cupy-cache-dir: empty path" in result.stderr
    result = run("build", "--only", "cupy", "--python", PYTHON, example, cwd=example.parent, check=1,
                 env={"CUPY_CACHE_DIR": str(in_the_way)})
    assert "CuPy failed while importing (FileExistsError" in result.stderr and "Traceback" not in result.stderr


def result_text(run, example, tmp_path, env):
    result = run("build", "--only", "cupy", *ARCH, "--cupy-cache-dir", tmp_path / "cupy", "--python", PYTHON, example,
                 cwd=example.parent, env=env)
    return result.stdout + result.stderr


def test_cupy_cache_dir_defaults_to_cupys_own(run, example, tmp_path):
    """Without --cupy-cache-dir, CuPy's own choice: $CUPY_CACHE_DIR, else ~/.cupy/kernel_cache."""
    report, _ = run.json("build", "--cupy-cache", "--only", "cuda", *ARCH, "--python", PYTHON, example,
                         cwd=example.parent, check=0)
    home_cache = Path(run.env["HOME"]) / ".cupy" / "kernel_cache"
    assert report["cupy"]["cache_dir"] == str(home_cache)
    assert len(list(home_cache.glob("*.cubin"))) == 2
    elsewhere = tmp_path / "elsewhere"
    report, _ = run.json("build", "--only", "cupy", *ARCH, "--python", PYTHON, example, cwd=example.parent, check=0,
                         env={"CUPY_CACHE_DIR": str(elsewhere)})
    assert len(list(elsewhere.glob("*.cubin"))) == 2
