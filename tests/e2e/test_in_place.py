"""`cunumpy-kernels build --in-place`: host modules built beside their sources, as `pyccel compile` does.

The code is the miniature of Struphy's shape from test_host_build (a kernel
taking an object of a class defined in another module, both importing a
third), plus a module no kernel imports and a test file the build must leave
alone. Python then imports the compiled modules by their names, with no
PyccelCache and no Pyccel involved.
"""

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import PYTHON, jobs_by_state
from test_host_build import SIM_FILES, logging_wrapper

EXTRA_FILES = {
    # Imported by the package's Python code, never by a kernel: only the tree scan finds it.
    "sim/util/extra_kernels.py": """
        def triple(x: 'float[:]'):
            for i in range(x.shape[0]):
                x[i] = 3.0 * x[i]
        """,
    # `*_kernels_*.py`, as Struphy's bsplines/evaluation_kernels_1d.py.
    "sim/util/eval_kernels_1d.py": """
        def half(x: float) -> float:
            return 0.5 * x
        """,
    # A pytest file that happens to match the suffix: never compiled.
    "sim/util/tests/test_lin_kernels.py": """
        def test_nothing():
            pass
        """,
}

ALL_MODULES = {"sim.util.lin_kernels", "sim.util.args_kernels", "sim.util.extra_kernels", "sim.util.eval_kernels_1d",
               "sim.kernels.scale.scale_kernels", "sim.kernels.plain.plain_kernels"}

# Imports the compiled modules as Struphy's code does, by name; Pyccel cannot be imported.
PROGRAM = """
import json, sys
import numpy as np
sys.modules["pyccel"] = None
import sim.util.args_kernels as args_kernels
import sim.kernels.scale.scale_kernels as scale_kernels
import sim.util.extra_kernels as extra_kernels
out = np.zeros(1)
scale_kernels.scale(args_kernels.Args(2.0, np.array([1.0, 2.0])), np.array([3.0, 4.0]), out)
x = np.array([1.0, 2.0])
extra_kernels.triple(x)
print(json.dumps({"out": out[0], "x": x.tolist(),
                  "files": [m.__file__ for m in (args_kernels, scale_kernels, extra_kernels)]}))
"""

EXT_SUFFIX = None


def ext_suffix():
    global EXT_SUFFIX
    if EXT_SUFFIX is None:
        EXT_SUFFIX = subprocess.run([PYTHON, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                                    capture_output=True, text=True, check=True).stdout.strip()
    return EXT_SUFFIX


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "simcode"
    for name, text in {**SIM_FILES, **EXTRA_FILES}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def run_program(root):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([PYTHON, "-c", PROGRAM], cwd=root, env=dict(env, PYTHONPATH=str(root)),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def build_args(tmp_path, tree, *more):
    return ["build", "--in-place", "--only", "host", "--jobs", "2", "--python", PYTHON,
            "--cache-dir", tmp_path / "cache", *more, tree]


def states(report):
    return {job["host_module"]: job["state"] for job in report["jobs"]}


def extension(tree, module):
    return tree / (module.replace(".", "/") + ext_suffix())


def test_every_module_is_built_beside_its_source_and_python_imports_it(run, tree, tmp_path):
    report, _ = run.json(*build_args(tmp_path, tree), check=0)
    assert states(report) == {name: "built" for name in ALL_MODULES}
    for name in ALL_MODULES:
        folder = extension(tree, name).parent
        stem = name.rsplit(".", 1)[1]
        assert extension(tree, name).is_file()
        # What importers, check-signatures and Pyccel's own later runs read.
        for part in (".pyi", ".o", "_wrapper.h"):
            assert (folder / "__pyccel__" / (stem + part)).is_file(), stem + part
        header, body = (folder / "__pyccel__" / (stem + ".cunumpy-kernels.json")).read_text().splitlines()
        # The host library (doc/host-libraries.md) beside the extension, the record's as the rest.
        assert (folder / (stem + ".ck-host.so")).is_file(), stem
        library = stem + ".ck-host.so"
        assert library in json.loads(header)["own"] and library in json.loads(body)["files"], (header, body)
    assert not list((tree / "sim/util/tests").glob("*" + ext_suffix()))
    # The class argument's module is imported through its in-place folder, where it stays.
    assert str(tree / "sim/util") in (tree / "sim/util/__pyccel__/args_kernels_wrapper.h").read_text()

    result = run_program(tree)
    assert result["out"] == 2.0 * 11.0 + 5.0 and result["x"] == [3.0, 6.0]
    assert all(f.endswith(ext_suffix()) for f in result["files"])

    signatures = json.loads(run("check-signatures", "--format", "json", tree / "sim", check=0).stdout)
    roles = {d["role"] for k in signatures["kernels"] for d in k["declarations"]}
    assert signatures["ok"] and "Pyccel stub" in roles


def test_a_warm_in_place_build_starts_no_process(run, tree, tmp_path):
    starts = tmp_path / "starts"
    python = logging_wrapper(tmp_path / "bin", "python", PYTHON, starts)
    args = ["build", "--in-place", "--only", "host", "--python", python, "--cache-dir", tmp_path / "cache", tree]
    run(*args, check=0)
    starts.unlink()
    stamps = {name: extension(tree, name).stat().st_mtime_ns for name in ALL_MODULES}
    report, _ = run.json(*args, check=0)
    assert states(report) == {name: "hit" for name in ALL_MODULES}
    assert not starts.exists(), "a warm build started " + starts.read_text()
    assert stamps == {name: extension(tree, name).stat().st_mtime_ns for name in ALL_MODULES}


def test_an_edited_import_is_flagged_in_status_and_exactly_its_dependants_rebuild(run, tree, tmp_path):
    run(*build_args(tmp_path, tree), check=0)
    lin = tree / "sim/util/lin_kernels.py"
    lin.write_text(lin.read_text().replace("s += a[i] * b[i]", "s += 2.0 * a[i] * b[i]"))

    status, result = run.json("status", "--in-place", "--only", "host", "--python", PYTHON, "--cache-dir", tmp_path / "cache",
                              tree, check=None)
    assert {a["kind"] for k in status["kernels"] for a in k["artifacts"]} == {"in-place"}
    modules = {m["module"]: m for m in status["modules"]}
    assert modules["sim.util.lin_kernels"]["state"] == "stale"
    assert modules["sim.util.lin_kernels"]["reason"] == "source lin_kernels.py changed"
    assert modules["sim.util.args_kernels"]["reason"] == "imported module sim.util.lin_kernels changed"
    assert modules["sim.util.extra_kernels"]["state"] == "built"
    kernels = {k["module"]: k["artifacts"] for k in status["kernels"]}
    assert [a["state"] for a in kernels["sim.kernels.scale"] if a["kind"] == "in-place"] == ["stale"]
    assert [a["state"] for a in kernels["sim.kernels.plain"] if a["kind"] == "in-place"] == ["built"]
    gate = run("status", "--in-place", "--require-built", "--python", PYTHON, "--cache-dir", tmp_path / "cache", tree)
    assert gate.returncode == 1 and "sim.util.lin_kernels" in gate.stderr

    report, _ = run.json(*build_args(tmp_path, tree), check=0)
    assert sorted(j["host_module"] for j in jobs_by_state(report, "built")) == [
        "sim.kernels.scale.scale_kernels", "sim.util.args_kernels", "sim.util.lin_kernels"]
    assert run_program(tree)["out"] == 2.0 * 22.0 + 10.0


def test_a_failed_module_leaves_its_previous_files_untouched(run, tree, tmp_path):
    run(*build_args(tmp_path, tree), check=0)
    args_module = tree / "sim/util/args_kernels.py"
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tree / "sim/util").rglob("*") if p.is_file()}
    args_module.write_text(args_module.read_text().replace("return dot(args.x, args.x)", "return undefined_name"))
    report, result = run.json(*build_args(tmp_path, tree))
    assert result.returncode == 1
    jobs = {j["host_module"]: j for j in report["jobs"]}
    assert jobs["sim.util.args_kernels"]["state"] == "failed"
    assert "undefined_name" in jobs["sim.util.args_kernels"]["log"] or "Undefined" in jobs["sim.util.args_kernels"]["log"]
    assert jobs["sim.kernels.scale.scale_kernels"]["state"] == "failed"
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (tree / "sim/util").rglob("*") if p.is_file()}
    del before[args_module], after[args_module]
    assert after == before
    assert not [p for p in tree.rglob("*.tmp*")] and not [p for p in tree.rglob(".*.so.*")]


def test_foreign_builds_are_kept_unless_older_than_their_sources_or_asked_and_clean_leaves_them(run, tree, tmp_path):
    plain = tree / "sim/kernels/plain/plain_kernels.py"
    subprocess.run([Path(PYTHON).parent / "pyccel", "compile", "--language", "c", plain.name], cwd=plain.parent,
                   capture_output=True, check=True, timeout=300)
    foreign = extension(tree, "sim.kernels.plain.plain_kernels")
    foreign_bytes = foreign.read_bytes()

    report, _ = run.json(*build_args(tmp_path, tree), check=0)
    jobs = {j["host_module"]: j for j in report["jobs"]}
    assert jobs["sim.kernels.plain.plain_kernels"]["state"] == "hit"
    assert "another tool" in jobs["sim.kernels.plain.plain_kernels"]["foreign"]
    assert foreign.read_bytes() == foreign_bytes
    status, _ = run.json("status", "--in-place", "--python", PYTHON, "--cache-dir", tmp_path / "cache", tree)
    plain_status = {k["module"]: k["artifacts"] for k in status["kernels"]}["sim.kernels.plain"]
    assert [a["state"] for a in plain_status if a["kind"] == "in-place"] == ["foreign"]
    gate = run("status", "--in-place", "--require-built", "--only", "host", "--python", PYTHON,
               "--cache-dir", tmp_path / "cache", tree)
    assert gate.returncode == 1 and "build --in-place --replace-foreign" in gate.stderr

    # Older than its source: replaced.
    os.utime(plain, ns=(foreign.stat().st_mtime_ns + 10**9,) * 2)
    dry, _ = run.json(*build_args(tmp_path, tree, "--dry-run"))
    assert {j["host_module"]: j["reason"] for j in dry["jobs"]}["sim.kernels.plain.plain_kernels"] == \
        "built by another tool (no record of ours beside it), older than its sources"
    # Asked: replaced even when newer.
    os.utime(plain, ns=(foreign.stat().st_mtime_ns - 10**9,) * 2)
    report, _ = run.json(*build_args(tmp_path, tree, "--replace-foreign"), check=0)
    assert states(report)["sim.kernels.plain.plain_kernels"] == "built"

    # Pyccel replaces one of ours in place: clean removes ours and leaves that one.
    extra = tree / "sim/util/extra_kernels.py"
    subprocess.run([Path(PYTHON).parent / "pyccel", "compile", "--language", "c", extra.name], cwd=extra.parent,
                   capture_output=True, check=True, timeout=300)
    listed = run("cache", "clean", "--in-place", "--dry-run", "--tree", tree, check=0)
    assert "extra_kernels" + ext_suffix() not in listed.stdout
    run("cache", "clean", "--in-place", "--tree", tree, check=0)
    assert extension(tree, "sim.util.extra_kernels").is_file()
    for name in ALL_MODULES - {"sim.util.extra_kernels"}:
        assert not extension(tree, name).exists(), name
    assert not list(tree.rglob("*.cunumpy-kernels.json"))
    # The sources are all there, and no folder of ours is left behind.
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py")) == sorted([*SIM_FILES, *EXTRA_FILES])
    assert not (tree / "sim/kernels/scale/__pyccel__").exists()
    assert [p.name for p in tree.rglob("*.ck-host.so")] == ["extra_kernels.ck-host.so"]  # the one Pyccel kept


def test_a_module_outside_any_package_builds_in_place(run, tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "foo_kernels.py").write_text("def twice(x: float) -> float:\n    return 2.0 * x\n")
    report, _ = run.json("build", "--in-place", "--only", "host", "--python", PYTHON, "--cache-dir",
                         tmp_path / "cache", loose, check=0)
    assert states(report) == {"foo_kernels": "built"}
    result = subprocess.run([PYTHON, "-c", "import foo_kernels; print(foo_kernels.__file__, foo_kernels.twice(2.0))"],
                            cwd=loose, capture_output=True, text=True, check=True)
    assert result.stdout.split() == [str(loose / ("foo_kernels" + ext_suffix())), "4.0"]


def test_an_imported_modules_lost_object_file_rebuilds_it_and_clean_takes_pyccels_locks(run, tree, tmp_path):
    run(*build_args(tmp_path, tree), check=0)
    (tree / "sim/util/__pyccel__/lin_kernels.o").unlink()
    dry, _ = run.json(*build_args(tmp_path, tree, "--dry-run"))
    reasons = {j["host_module"]: j["reason"] for j in dry["jobs"] if j["state"] == "would-build"}
    assert reasons == {"sim.util.lin_kernels": "__pyccel__/lin_kernels.o of its build is missing"}
    run(*build_args(tmp_path, tree), check=0)
    assert (tree / "sim/util/__pyccel__/lin_kernels.o").is_file()
    run("cache", "clean", "--in-place", "--tree", tree, check=0)
    assert not list(tree.rglob("__pyccel__")), [str(p) for p in tree.rglob("__pyccel__/*")]


@pytest.mark.parametrize("language", ["c", "fortran"])
def test_every_file_pyccel_writes_for_a_module_is_checked_for_in_both_languages(run, tree, tmp_path, language):
    """Each file of the module's own in __pyccel__ (Fortran's `bind_c_<stem>_wrapper.*` included),
    lost, makes the module incomplete: it is rebuilt, not served."""
    run(*build_args(tmp_path, tree, "--language", language), check=0)
    folder = tree / "sim/util/__pyccel__"
    own = sorted(p.name for p in folder.iterdir() if "lin_kernels" in p.name and p.is_file()
                 and not p.name.endswith((".lock", ".cunumpy-kernels.json")))  # Pyccel's locks, our record
    assert any(name.startswith("bind_c_") for name in own) == (language == "fortran"), own
    for name in own:
        saved = (folder / name).read_bytes()
        (folder / name).unlink()
        dry, _ = run.json(*build_args(tmp_path, tree, "--language", language, "--dry-run"))
        reasons = {j["host_module"]: j["reason"] for j in dry["jobs"] if j["state"] == "would-build"}
        assert reasons.get("sim.util.lin_kernels") == f"__pyccel__/{name} of its build is missing", (name, reasons)
        (folder / name).write_bytes(saved)


def test_a_language_switch_leaves_no_file_of_the_first_language(run, tree, tmp_path):
    plain = tree / "sim/kernels/plain"
    args = ["build", "--in-place", "--only", "host", "--python", PYTHON, "--cache-dir", tmp_path / "cache"]
    run(*args, plain, check=0)
    assert (plain / "__pyccel__/plain_kernels.c").is_file()
    run(*args, "--language", "fortran", plain, check=0)
    assert not (plain / "__pyccel__/plain_kernels.c").exists()
    run("cache", "clean", "--in-place", "--tree", plain, check=0)
    assert sorted(p.name for p in plain.iterdir()) == ["plain_kernels.py"]
