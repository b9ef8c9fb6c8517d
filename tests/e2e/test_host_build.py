"""`cunumpy-kernels build` of Pyccel host kernels, and cunumpy's PyccelCache loading them.

Each test builds into a cache in its own temporary folder and runs Python
programs that load the kernels through cunumpy with compiling made impossible:
cunumpy's way to the pyccel command raises, and every pyccel run is counted.
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import PYTHON, SOURCE_ROOT, jobs_by_state, status_rows


# Prepended to every program: compiling is impossible, and attempts are counted.
NO_COMPILER = textwrap.dedent(
    """
    import subprocess
    import cunumpy._pyccel_cache as pyccel_cache

    PYCCEL_RUNS = []
    _run = subprocess.run

    def _counting_run(command, *args, **kwargs):
        if any("pyccel" in str(part) for part in command):
            PYCCEL_RUNS.append(command)
        return _run(command, *args, **kwargs)

    def _no_pyccel():
        raise RuntimeError("compiling is impossible in this test")

    pyccel_cache.subprocess.run = _counting_run
    pyccel_cache._pyccel_command = _no_pyccel
    """
)


def run_program(source, pythonpath, cache, env=None):
    """Runs `source` after NO_COMPILER with the venv's Python; returns its JSON output."""
    full_env = {k: v for k, v in os.environ.items() if not k.endswith("_KERNEL_CACHE") and not k.endswith("_OPENMP")}
    full_env.update(PYTHONPATH=str(pythonpath), **(env or {}))
    for name in ("PARTICLES", "SIM"):
        full_env[f"{name}_KERNEL_CACHE"] = str(cache)
    result = subprocess.run([PYTHON, "-c", NO_COMPILER + textwrap.dedent(source)], env=full_env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def host_jobs(report):
    return [job for job in report["jobs"] if job["target"] == "host"]


EXAMPLE_PROGRAM = """
import json
import numpy as np
from particles.kernels import catalog

n = 5
x = np.linspace(0.0, 0.8, n)
v = np.ones(n)
e = np.full(n, 2.0)
catalog["push"](x, v, e, 0.1, 1.0, n)
rho = np.zeros(4)
catalog["deposit"](x, np.ones(n), rho, 0.25, n, 4)
loaded = {name: catalog[name].host_kernel.kernel.available("pyccel") for name in catalog}
errors = {name: repr(catalog[name].host_kernel.kernel.errors) for name in catalog}
print(json.dumps({"x": x.tolist(), "v": v.tolist(), "rho_sum": float(rho.sum()), "loaded": loaded,
                  "selected": catalog["push"].selected(), "errors": errors, "pyccel_runs": len(PYCCEL_RUNS)}))
"""


def test_example_host_kernels_build_and_cunumpy_loads_them_without_compiling(run, example, tmp_path):
    cache = tmp_path / "cache"
    report, result = run.json("build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, example, check=0)
    jobs = host_jobs(report)
    assert {(j["module"], j["kernel"], j["state"]) for j in jobs} == {
        ("particles.kernels.push", "push", "built"),
        ("particles.kernels.deposit", "deposit", "built"),
        ("particles.kernels.sort", "sort", "built"),
    }
    for job in jobs:
        stem = job["host_module"].rsplit(".", 1)[1]
        named = Path(job["cunumpy_entry"])
        assert re.fullmatch(stem + r"-[0-9a-f]{20}", named.name)
        assert named.parent == cache
        (artifact,) = job["artifacts"]
        assert (named / Path(artifact).name).resolve() == Path(artifact).resolve()
        manifest = json.loads((Path(job["entry"]) / "manifest.json").read_text())
        assert manifest["kind"] == "host" and manifest["key"] == job["key"]
        assert manifest["inputs"]["language"] == "c" and manifest["inputs"]["openmp"] is True
        assert manifest["inputs"]["pyccel"].startswith("pyccel 2.")

    out = run_program(EXAMPLE_PROGRAM, example, cache)
    assert out["pyccel_runs"] == 0
    assert out["loaded"] == {"push": True, "deposit": True, "sort": True}, out["errors"]
    assert out["selected"] == "pyccel"
    assert out["v"] == pytest.approx([1.2] * 5)
    assert out["x"] == pytest.approx([(x + 0.12) % 1.0 for x in (0.0, 0.2, 0.4, 0.6, 0.8)])
    assert out["rho_sum"] == pytest.approx(5 / 0.25)


def logging_wrapper(folder, name, real, log):
    """An executable `folder/name` that logs each start to `log`, then runs `real`."""
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / name
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return wrapper


def test_a_warm_build_starts_no_process(run, example, tmp_path):
    bin_dir = tmp_path / "bin"
    starts = tmp_path / "starts"
    python = logging_wrapper(bin_dir, "python", PYTHON, starts)
    logging_wrapper(bin_dir, "gcc", shutil.which("gcc"), starts)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    args = ["build", "--only", "host", "--python", python, "--cache-dir", tmp_path / "cache", example]
    run(*args, env=env, check=0)
    assert starts.read_text().count("\n") >= 2  # the probe, gcc --version, the import checks
    starts.unlink()
    result = run(*args, env=env, check=0)
    assert "0 built, 3 cached, 0 failed" in result.stdout
    assert not starts.exists(), "a warm build started " + starts.read_text()


def test_entries_cunumpy_built_itself_are_hits(run, example, tmp_path):
    cache = tmp_path / "cache"
    program = """
    import importlib, json
    import cunumpy as xp
    cache = xp.kernels.PyccelCache("particles")
    cache.compile(importlib.import_module("particles.kernels.sort.sort_kernels"))
    print(json.dumps({}))
    """
    # This one may compile: restore cunumpy's own pyccel lookup.
    full_env = dict(os.environ, PYTHONPATH=str(example), PARTICLES_KERNEL_CACHE=str(cache))
    full_env.pop("PARTICLES_OPENMP", None)
    subprocess.run([PYTHON, "-c", textwrap.dedent(program)], env=full_env, check=True, timeout=300)
    (built_by_cunumpy,) = [p for p in cache.iterdir() if p.name.startswith("sort_kernels-")]
    assert built_by_cunumpy.is_dir() and not built_by_cunumpy.is_symlink()

    dry, _ = run.json("build", "--dry-run", "--only", "host", "--python", PYTHON, "--cache-dir", cache, example)
    states = {j["kernel"]: (j["state"], j["reason"]) for j in host_jobs(dry)}
    assert states["sort"] == ("hit", "built by cunumpy's PyccelCache")
    assert states["push"] == ("would-build", "no entry")

    report, _ = run.json("build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, example, check=0)
    states = {j["kernel"]: j["state"] for j in host_jobs(report)}
    assert states == {"sort": "hit", "push": "built", "deposit": "built"}
    assert built_by_cunumpy.is_dir() and not built_by_cunumpy.is_symlink()


def test_openmp_off_through_the_environment_gives_the_builds_cunumpy_looks_for(run, example, tmp_path):
    cache = tmp_path / "cache"
    env = {"PARTICLES_OPENMP": "0"}
    report, _ = run.json("build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, example, env=env, check=0)
    for job in host_jobs(report):
        assert json.loads((Path(job["entry"]) / "manifest.json").read_text())["inputs"]["openmp"] is False
    out = run_program(EXAMPLE_PROGRAM, example, cache, env=env)
    assert out["pyccel_runs"] == 0 and all(out["loaded"].values()), out["errors"]
    # With OpenMP on (cunumpy's default) those builds do not fit: other keys.
    dry, _ = run.json("build", "--dry-run", "--only", "host", "--python", PYTHON, "--cache-dir", cache, example)
    assert {j["state"] for j in host_jobs(dry)} == {"would-build"}
    assert {j["reason"] for j in host_jobs(dry)} == {"openmp: false -> true"}


def test_a_broken_module_gets_pyccels_diagnostic_and_the_cache_stays_intact(run, example, tmp_path):
    cache = tmp_path / "cache"
    args = ["build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, example]
    first, _ = run.json(*args, check=0)
    push = example / "particles" / "kernels" / "push" / "push_kernels.py"
    push.write_text(push.read_text().replace("v[i] = v[i] + dt * e[i]", "v[i] = v[i] + dt * not_defined[i]"))
    result = run(*args)
    assert result.returncode == 1
    line = next(n for n, text in enumerate(push.read_text().splitlines(), 1) if "not_defined" in text)
    assert re.search(re.escape(str(push)) + rf":{line}:\d+: fatal: Undefined variable \(not_defined\)", result.stderr)
    assert "0 built, 2 cached, 1 failed" in result.stdout
    for job in host_jobs(first):  # every earlier build is whole, and still where cunumpy looks
        assert Path(job["artifacts"][0]).is_file()
        assert (Path(job["entry"]) / "manifest.json").is_file()
        assert Path(job["cunumpy_entry"]).resolve() == Path(job["artifacts"][0]).parent.resolve()
    assert not list((cache / ".cunumpy-kernels-tmp").iterdir())


# A code whose kernel takes an object of a class defined in another module,
# and both import a third: Struphy's shape, in miniature.
SIM_FILES = {
    "sim/__init__.py": "",
    "sim/util/__init__.py": "",
    "sim/util/lin_kernels.py": """
        def dot(a: 'float[:]', b: 'float[:]') -> float:
            s = 0.0
            for i in range(a.shape[0]):
                s += a[i] * b[i]
            return s
        """,
    "sim/util/args_kernels.py": """
        from sim.util.lin_kernels import dot


        class Args:
            def __init__(self, scale: float, x: 'float[:]'):
                self.scale = scale
                self.x = x


        def norm2(args: 'Args') -> float:
            return dot(args.x, args.x)
        """,
    "sim/kernels/__init__.py": "",
    "sim/kernels/scale/scale_kernels.py": """
        from sim.util.lin_kernels import dot
        from sim.util.args_kernels import Args, norm2


        def scale(args: 'Args', b: 'float[:]', out: 'float[:]'):
            out[0] = args.scale * dot(args.x, b) + norm2(args)
        """,
    "sim/kernels/plain/plain_kernels.py": """
        def plain(x: 'float[:]', n: int):
            for i in range(n):
                x[i] = 2.0 * x[i]
        """,
}

SIM_PROGRAM = """
import importlib, json
import numpy as np
import cunumpy as xp

cache = xp.kernels.PyccelCache("sim")
args_module = cache.compile(importlib.import_module("sim.util.args_kernels"))
scale = cache.compile(importlib.import_module("sim.kernels.scale.scale_kernels")).scale
out = np.zeros(1)
scale(args_module.Args(2.0, np.array([1.0, 2.0])), np.array([3.0, 4.0]), out)
print(json.dumps({"out": out[0], "pyccel_runs": len(PYCCEL_RUNS)}))
"""


@pytest.fixture
def sim(tmp_path):
    root = tmp_path / "simcode"
    for name, text in SIM_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def test_a_class_argument_across_modules_and_an_edited_import_rebuilds_its_importers(run, sim, tmp_path):
    cache = tmp_path / "cache"
    args = ["build", "--only", "host", "--jobs", "2", "--python", PYTHON, "--cache-dir", cache, sim]
    report, _ = run.json(*args, check=0)
    states = {j["module"]: j["state"] for j in host_jobs(report)}
    assert states == {"sim.util.lin_kernels": "built", "sim.util.args_kernels": "built",
                      "sim.kernels.scale": "built", "sim.kernels.plain": "built"}
    assert run_program(SIM_PROGRAM, sim, cache) == {"out": 2.0 * 11.0 + 5.0, "pyccel_runs": 0}
    # The schedule's figures agree with the jobs: args waits for lin, which it imports.
    schedule = report["schedule"]
    seconds = {j["module"]: j["seconds"] for j in host_jobs(report)}
    assert schedule["workers"] == 2 and schedule["jobs"] == 4
    assert schedule["job_seconds"] >= sum(seconds.values()) - 0.01
    chain = seconds["sim.util.lin_kernels"] + seconds["sim.util.args_kernels"]
    assert chain - 0.01 <= schedule["longest_path_seconds"] <= schedule["job_seconds"]
    assert schedule["bound_seconds"] == pytest.approx(schedule["job_seconds"] / 2 + schedule["longest_path_seconds"])
    assert 0 < schedule["wall_seconds"] and 0 < schedule["plan_seconds"]

    # The build folders live on, and move nowhere: what the class import needs.
    lin = sim / "sim" / "util" / "lin_kernels.py"
    lin.write_text(lin.read_text().replace("s += a[i] * b[i]", "s += 2.0 * a[i] * b[i]"))
    dry, _ = run.json("build", "--dry-run", *args[1:])
    reasons = {j["module"]: (j["state"], j["reason"]) for j in host_jobs(dry)}
    assert reasons["sim.util.lin_kernels"] == ("would-build", "source lin_kernels.py changed")
    assert reasons["sim.util.args_kernels"] == ("would-build", "imported module sim.util.lin_kernels changed")
    assert reasons["sim.kernels.scale"][0] == "would-build"
    assert reasons["sim.kernels.scale"][1].startswith("imported module sim.util.")
    assert reasons["sim.kernels.plain"][0] == "hit"

    report, _ = run.json(*args, check=0)
    assert sorted(j["module"] for j in jobs_by_state(report, "built")) == [
        "sim.kernels.scale", "sim.util.args_kernels", "sim.util.lin_kernels"]
    # cunumpy's key for scale_kernels did not change (its own source did not),
    # yet it now loads the new build.
    assert run_program(SIM_PROGRAM, sim, cache) == {"out": 2.0 * 22.0 + 10.0, "pyccel_runs": 0}


def test_a_broken_imported_module_fails_with_its_importers_and_the_rest_builds(run, sim, tmp_path):
    cache = tmp_path / "cache"
    lin = sim / "sim" / "util" / "lin_kernels.py"
    lin.write_text(lin.read_text().replace("s = 0.0", "s = undefined_name"))
    report, result = run.json("build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, sim)
    assert result.returncode == 1
    states = {j["module"]: j for j in host_jobs(report)}
    assert states["sim.kernels.plain"]["state"] == "built"
    assert states["sim.util.lin_kernels"]["state"] == "failed"
    assert re.search(re.escape(str(lin)) + r":\d+:\d+: fatal: Undefined variable", states["sim.util.lin_kernels"]["log"])
    for importer in ("sim.util.args_kernels", "sim.kernels.scale"):
        assert states[importer]["state"] == "failed"
        assert "it imports sim.util.lin_kernels" in states[importer]["log"]
    assert not (cache / "host" ).exists() or len(list((cache / "host").glob("*/*"))) == 1
    assert not list((cache / ".cunumpy-kernels-tmp").iterdir())


def test_fortran_builds_load_through_cunumpy_too(run, sim, tmp_path):
    cache = tmp_path / "cache"
    report, _ = run.json("build", "--only", "host", "--language", "fortran", "--python", PYTHON,
                         "--cache-dir", cache, sim, check=0)
    assert {j["state"] for j in host_jobs(report)} == {"built"}
    program = SIM_PROGRAM.replace('PyccelCache("sim")', 'PyccelCache("sim", language="fortran")')
    assert run_program(program, sim, cache) == {"out": 27.0, "pyccel_runs": 0}


def test_an_import_cycle_is_reported_with_its_modules(run, sim, tmp_path):
    (sim / "sim" / "util" / "lin_kernels.py").write_text("from sim.util.args_kernels import Args\n")
    report, result = run.json("build", "--only", "host", "--python", PYTHON, "--cache-dir", tmp_path / "cache", sim)
    assert result.returncode == 1
    failed = {j["module"]: j["log"] for j in jobs_by_state(report, "failed")}
    assert set(failed) == {"sim.util.lin_kernels", "sim.util.args_kernels", "sim.kernels.scale"}
    assert "import cycle" in failed["sim.util.lin_kernels"]
    assert {j["module"] for j in jobs_by_state(report, "built")} == {"sim.kernels.plain"}
    status = run("status", "--python", PYTHON, "--cache-dir", tmp_path / "cache", sim)
    row = status_rows(status.stdout)["sim.kernels.scale"]
    assert "failed (" in row and "import cycle" in row, status.stdout


def test_a_relative_python_is_found_from_any_folder_and_from_pyproject(run, example, tmp_path):
    relative = os.path.relpath(PYTHON, example)
    report, result = run.json("build", "--only", "host", "--python", relative, "--cache-dir", tmp_path / "c",
                              ".", cwd=example)
    assert result.returncode == 0, result.stderr
    assert len(jobs_by_state(report, "built")) == 3
    # In pyproject.toml a path is relative to the file, whatever the working folder.
    pyproject = example.parent / "pyproject.toml"
    assert pyproject.read_text().rstrip().splitlines()[-3] == "[tool.cunumpy-kernels]"
    pyproject.write_text(pyproject.read_text() + f'python = "{os.path.relpath(PYTHON, example.parent)}"\n')
    report, result = run.json("build", "--only", "host", "--cache-dir", tmp_path / "c", example, cwd="/")
    assert result.returncode == 0, result.stderr
    assert len(jobs_by_state(report, "hit")) == 3


@pytest.mark.parametrize("program", ["silent", "chatty"])
def test_a_python_that_is_no_python_is_named_as_such(run, example, tmp_path, program):
    fake = tmp_path / program
    fake.write_text("#!/bin/sh\n" + ("" if program == "silent" else "echo 'module system: loading python'\n"))
    fake.chmod(0o755)
    result = run("build", "--only", "host", "--python", fake, "--cache-dir", tmp_path / "c", example)
    assert result.returncode == 1
    assert str(fake) in result.stderr and "is it a Python interpreter?" in result.stderr, result.stderr
    assert "parse error" not in result.stderr and "json.exception" not in result.stderr, result.stderr
    if program == "chatty":
        assert "module system: loading python" in result.stderr


def test_without_pyccel_the_build_says_what_to_do(run, example, tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    result = run("build", "--only", "host", "--python", bare / "bin" / "python", "--cache-dir", tmp_path / "c", example)
    assert result.returncode == 1
    assert "Pyccel is not installed for" in result.stderr and "--only cuda" in result.stderr
    dry = run("build", "--dry-run", "--only", "host", "--python", bare / "bin" / "python", "--cache-dir", tmp_path / "c",
              example)
    assert dry.returncode == 1 and "Pyccel is not installed for" in dry.stderr
    # CUDA kernels need no Pyccel (cunumpy's headers come from the project's environment here).
    headers = subprocess.run([PYTHON, "-c", "import cunumpy.cuda as c; print(c.cuda_include_dir())"],
                             capture_output=True, text=True, check=True).stdout.strip()
    cuda_only = run("build", "--only", "cuda", "--python", bare / "bin" / "python", "--cunumpy-include-dir", headers,
                    "--cache-dir", tmp_path / "c", "--arch", "sm_90", "--no-ptx", example)
    assert cuda_only.returncode == 0, cuda_only.stderr


def test_host_and_cuda_jobs_share_one_build_one_display_and_one_report(run, example, tmp_path):
    args = ["build", "--jobs", "2", "--python", PYTHON, "--arch", "sm_90", "--no-ptx", "--cache-dir", tmp_path / "c",
            example]
    result = run(*args, check=0)
    for kernel in ("push", "deposit"):
        assert f"built   particles.kernels.{kernel} [host]" in result.stderr
        assert f"built   particles.kernels.{kernel} [sm_90]" in result.stderr
    assert "3 kernels (2 with CUDA, 3 host modules): 5 built, 0 cached, 0 failed" in result.stdout
    report, _ = run.json(*args, check=0)
    assert sorted((j["kernel"], j["target"], j["state"]) for j in report["jobs"]) == [
        ("deposit", "host", "hit"), ("deposit", "sm_90", "hit"), ("push", "host", "hit"), ("push", "sm_90", "hit"),
        ("sort", "host", "hit")]


def failing_python(folder, behaviour):
    """A Python that answers the probe but runs `behaviour` for the import check of a new build."""
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\ncase "$*" in *spec_from_file_location*) {behaviour} ;; esac\nexec {PYTHON} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return wrapper


def test_a_build_that_does_not_import_or_crashes_the_interpreter_is_not_published(run, example, tmp_path):
    cases = {"failed (exit 3)": "echo 'ImportError: undefined symbol: omp_get_thread_num' >&2; exit 3",
             "crashed the interpreter (signal 11)": "kill -SEGV $$"}
    for i, (how, behaviour) in enumerate(cases.items()):
        python = failing_python(tmp_path / f"bin{i}", behaviour)
        cache = tmp_path / f"cache{i}"
        report, result = run.json("build", "--only", "host", "--python", python, "--cache-dir", cache, example)
        assert result.returncode == 1
        for job in host_jobs(report):
            assert job["state"] == "failed"
            assert "importing the new build" in job["log"] and how in job["log"], job["log"]
        assert "undefined symbol" in host_jobs(report)[0]["log"] or how.startswith("crashed")
        assert not (cache / "host").exists() or not list((cache / "host").glob("*/*"))
        assert not [p for p in cache.iterdir() if re.fullmatch(r"\w+-[0-9a-f]{20}", p.name)]
        assert not list((cache / ".cunumpy-kernels-tmp").iterdir())


@pytest.mark.parametrize("variable,value,keyed", [("PYCCEL_DEBUG_MODE", "1", "debug"),
                                                  ("PYCCEL_DEFAULT_COMPILER", "LLVM", "LLVM"),
                                                  ("PYCCEL_CONFIG_HOME", "{tmp}/pyccel-home", "config_home")])
def test_pyccels_settings_are_passed_explicitly_and_keyed(run, sim, tmp_path, variable, value, keyed):
    cache = tmp_path / "cache"
    args = ["build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, sim]
    report, _ = run.json(*args, check=0)
    assert all(j["state"] == "built" for j in host_jobs(report))
    env = {variable: value.format(tmp=tmp_path)}
    dry, _ = run.json("build", "--dry-run", *args[1:], env=env)
    reasons = {j["module"]: (j["state"], j["reason"]) for j in host_jobs(dry)}
    state, reason = reasons["sim.util.lin_kernels"]
    assert state == "would-build" and keyed in reason, reason
    if variable == "PYCCEL_DEBUG_MODE":
        # The debug build is its own entry; a release build afterwards is served the release one.
        report, _ = run.json(*args, env=env, check=0)
        assert all(j["state"] == "built" for j in host_jobs(report))
        report, _ = run.json(*args, check=0)
        assert all(j["state"] == "hit" for j in host_jobs(report))
    # Set to Pyccel's defaults, nothing changes.
    default = {"PYCCEL_DEBUG_MODE": "", "PYCCEL_DEFAULT_COMPILER": "GNU", "PYCCEL_CONFIG_HOME": ""}[variable]
    dry, _ = run.json("build", "--dry-run", *args[1:], env={variable: default})
    assert all(j["state"] == "hit" for j in host_jobs(dry))
