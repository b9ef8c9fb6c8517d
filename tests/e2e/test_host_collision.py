"""Two modules of one text that import different code: cunumpy's PyccelCache
gives them one build name, so it must never load one's build for the other.

A copied kernel package: `kernels/kd` and `kernels2/kd` are the same file and
import `..util.helpers.scale`, which multiplies by 3 in one package and by 5
in the other.
"""

import textwrap

from conftest import jobs_by_state, status_rows
from test_host_build import PYTHON, host_jobs, run_program

KD = """
from ..util.helpers import scale


def kd(x: 'float[:]'):
    x[0] = scale(x[0])
"""


def helpers(factor):
    return f"""
def scale(a: float) -> float:
    return {factor}.0 * a
"""


def write_tree(root, factor2=5):
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels/__init__.py": "",
        "pkg/kernels/kd/kd_kernels.py": KD,
        "pkg/kernels/util/__init__.py": "",
        "pkg/kernels/util/helpers.py": helpers(3),
        "pkg/kernels2/__init__.py": "",
        "pkg/kernels2/kd/kd_kernels.py": KD,
        "pkg/kernels2/util/__init__.py": "",
        "pkg/kernels2/util/helpers.py": helpers(factor2),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


# Loads both kernels as cunumpy does, from the cache only.
PROGRAM = """
import importlib, json
import numpy as np
import cunumpy as xp

cache = xp.kernels.PyccelCache("pkg")
out = {}
for package in ("kernels", "kernels2"):
    module = importlib.import_module(f"pkg.{package}.kd.kd_kernels")
    x = np.array([1.0])
    cache.compile(module).kd(x)
    out[package] = x[0]
print(json.dumps({"out": out, "pyccel_runs": len(PYCCEL_RUNS)}))
"""


def status_row(run, cache, path, kernel):
    result = run("status", "--python", PYTHON, "--cache-dir", cache, path)
    return status_rows(result.stdout)[kernel], result


def test_one_build_fails_both_modules_and_says_why(run, tmp_path):
    src = write_tree(tmp_path / "src")
    cache = tmp_path / "cache"
    args = ["build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, src]
    report, result = run.json(*args)
    assert result.returncode == 1
    failed = {j["module"]: j["log"] for j in jobs_by_state(report, "failed")}
    assert set(failed) == {"pkg.kernels.kd", "pkg.kernels2.kd"}
    first = failed["pkg.kernels.kd"]
    assert "pkg.kernels2.kd.kd_kernels" in first and "kd_kernels-" in first
    assert "module's own text" in first and "Make the two texts differ" in first
    assert "pkg.kernels.util.helpers and pkg.kernels2.util.helpers differ" in first
    assert "pkg.kernels.kd.kd_kernels" in failed["pkg.kernels2.kd"]
    assert {j["module"] for j in jobs_by_state(report, "built")} == {"pkg.kernels.util.helpers",
                                                                       "pkg.kernels2.util.helpers"}
    assert not list(cache.glob("kd_kernels-*"))

    for kernel in ("pkg.kernels.kd", "pkg.kernels2.kd"):
        row, _ = status_row(run, cache, src, kernel)
        assert "failed (" in row and "shares cunumpy's build name" in row, row

    # The way out the message gives: texts that differ.
    kd2 = src / "pkg" / "kernels2" / "kd" / "kd_kernels.py"
    kd2.write_text("# pkg.kernels2\n" + kd2.read_text())
    run(*args, check=0)
    assert run_program(PROGRAM, src, cache, env={"PKG_KERNEL_CACHE": str(cache)}) == {
        "out": {"kernels": 3.0, "kernels2": 5.0}, "pyccel_runs": 0}


def test_identical_copies_share_one_build_and_stay_built(run, tmp_path):
    src = write_tree(tmp_path / "src", factor2=3)
    cache = tmp_path / "cache"
    args = ["build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, src]
    run(*args, check=0)
    (link,) = cache.glob("kd_kernels-*")
    target = link.readlink()
    result = run(*args, check=0)
    assert "0 built, 4 cached, 0 failed" in result.stdout
    assert link.readlink() == target  # no flip-flop between the two copies
    for kernel in ("pkg.kernels.kd", "pkg.kernels2.kd"):
        row, _ = status_row(run, cache, src, kernel)
        assert "built" in row and "stale" not in row, row
    assert run_program(PROGRAM, src, cache, env={"PKG_KERNEL_CACHE": str(cache)})["out"] == {
        "kernels": 3.0, "kernels2": 3.0}


def test_a_later_build_of_the_other_package_is_seen_by_status_and_warned_about(run, tmp_path):
    src = write_tree(tmp_path / "src")
    cache = tmp_path / "cache"
    one = src / "pkg" / "kernels"
    two = src / "pkg" / "kernels2"
    build = ["build", "--only", "host", "--python", PYTHON, "--cache-dir", cache]
    run(*build, one, check=0)
    row, _ = status_row(run, cache, one, "pkg.kernels.kd")
    assert "built" in row and "stale" not in row, row

    # Building the other package alone re-points the shared name: it says so.
    result = run(*build, two, check=0)
    assert "points at the build of pkg.kernels.kd.kd_kernels" in result.stderr, result.stderr
    assert "re-points it" in result.stderr and "make the texts of" in result.stderr
    row, _ = status_row(run, cache, one, "pkg.kernels.kd")
    assert "stale (" in row and "points at the build of pkg.kernels2.kd.kd_kernels" in row, row
    status, _ = run.json("status", "--python", PYTHON, "--cache-dir", cache, one)
    (artifact,) = [a for k in status["kernels"] for a in k["artifacts"] if a["target"] == "host"]
    assert artifact["state"] == "stale"
    result = run("status", "--require-built", "--python", PYTHON, "--cache-dir", cache, one)
    assert result.returncode == 1

    # cunumpy now loads kernels2's build for kernels: what status warned about.
    program_env = {"PKG_KERNEL_CACHE": str(cache)}
    assert run_program(PROGRAM, src, cache, env=program_env)["out"]["kernels"] == 5.0
    # Building the first package again re-points it back, again with a warning.
    result = run(*build, one, check=0)
    assert "points at the build of pkg.kernels2.kd.kd_kernels" in result.stderr
    assert run_program(PROGRAM, src, cache, env=program_env)["out"]["kernels"] == 3.0
