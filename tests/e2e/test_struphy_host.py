"""Host (Pyccel) builds of Struphy's published kernels, loaded back through cunumpy.

Bounded for CI: the geometry package (domain kernels, mappings, their spline
and linear-algebra imports) and one pusher whose function takes Struphy's
argument classes (`MarkerArguments`, `DomainArguments`) from another module.
The whole tree is built by hand; its figures are in bench/RESULTS.md.
"""

import json
import os
import re
import subprocess
import textwrap

from conftest import jobs_by_state
from test_host_build import NO_COMPILER, PYTHON

PUSHER = "struphy/pic/pushing/kernels/push_eta_stage"

# Imports a Struphy kernel module without running struphy/__init__.py (whose
# own dependencies this environment lacks): every package folder is
# registered as an empty package first.
LOAD_PUSHER = """
import importlib, json, sys, types
from pathlib import Path
import cunumpy as xp

root = Path(sys.argv[1])
for folder in sorted(p for p in (root / "struphy").rglob("*") if p.is_dir()) + [root / "struphy"]:
    name = ".".join(folder.relative_to(root).parts)
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    sys.modules[name] = package
module = importlib.import_module("struphy.pic.pushing.kernels.push_eta_stage.push_eta_stage_kernels")
compiled = xp.kernels.PyccelCache("struphy").compile(module)
print(json.dumps({"function": type(compiled.push_eta_stage).__name__, "file": compiled.__file__,
                  "arguments_from": sys.modules["pusher_args_kernels"].__file__,
                  "pyccel_runs": len(PYCCEL_RUNS)}))
"""


def test_struphy_host_modules_build_or_fail_with_pyccels_diagnostic(run, struphy_tree, tmp_path):  # noqa: F811
    cache = tmp_path / "cache"
    paths = [struphy_tree / "struphy" / "geometry", struphy_tree / PUSHER]
    args = ["build", "--only", "host", "--jobs", "2", "--python", PYTHON, "--cache-dir", cache, *paths]
    report, result = run.json(*args, timeout=1800)
    assert result.returncode in (0, 1), result.stderr
    modules = {job["host_module"]: job for job in report["jobs"]}
    assert "struphy.kernel_arguments.pusher_args_kernels" in modules
    assert "struphy.linear_algebra.linalg_kernels" in modules
    assert len(modules) >= 20
    for job in report["jobs"]:
        assert job["state"] in ("built", "failed")
        if job["state"] == "failed":
            assert re.search(r"\.py(:\d+)*: (fatal|error)", job["log"]), job["log"]
    built = jobs_by_state(report, "built")
    print(f"struphy host: {len(modules)} modules, {len(built)} built, "
          f"failed: {sorted(j['host_module'] for j in jobs_by_state(report, 'failed'))}")
    assert modules["struphy.pic.pushing.kernels.push_eta_stage.push_eta_stage_kernels"]["state"] == "built"

    # cunumpy loads the pusher from the cache; its argument classes come from
    # the immutable entry of pusher_args_kernels that Pyccel wrote into it.
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OPENMP")}
    env["STRUPHY_KERNEL_CACHE"] = str(cache)
    load = subprocess.run([PYTHON, "-c", NO_COMPILER + textwrap.dedent(LOAD_PUSHER), str(struphy_tree)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert load.returncode == 0, load.stderr
    out = json.loads(load.stdout.strip().splitlines()[-1])
    assert out["pyccel_runs"] == 0
    assert out["function"] == "builtin_function_or_method"
    arguments = modules["struphy.kernel_arguments.pusher_args_kernels"]
    assert os.path.realpath(out["arguments_from"]) == os.path.realpath(arguments["artifacts"][0])

    # Warm: every job a hit.
    report, _ = run.json(*args, timeout=600)
    assert len(jobs_by_state(report, "hit")) == len(built)


def struphy_compile_sources(tree):
    """The modules `struphy compile` builds (struphy/console/compile.py, collect_kernel_files, 3.5.0)."""
    found = []
    for folder, _, files in os.walk(tree / "struphy"):
        if "__pycache__" in folder or "__pyccel__" in folder:
            continue
        for name in files:
            if "kernels" in name and name.endswith(".py") and "_tmp.py" not in name and "test" not in name:
                path = os.path.relpath(os.path.join(folder, name), tree)
                found.append(path[:-3].replace(os.sep, "."))
    return sorted(found)


def test_in_place_builds_the_modules_struphy_compile_builds(run, struphy_tree, tmp_path):  # noqa: F811
    args = ["build", "--in-place", "--dry-run", "--only", "host", "--python", PYTHON,
            "--cache-dir", tmp_path / "cache", struphy_tree / "struphy"]
    report, _ = run.json(*args, check=0)
    planned = sorted(job["host_module"] for job in report["jobs"])
    expected = struphy_compile_sources(struphy_tree)
    assert len(expected) == 149
    assert planned == expected
    # The normal build walks only the kernels and what they import: 138 modules (the six
    # folders that bind no function of their name are no kernels; five of them are imported).
    walked, _ = run.json(*[a for a in args if a != "--in-place"], check=0)
    assert len(walked["jobs"]) == 138
