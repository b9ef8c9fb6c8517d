"""Bytes that are not UTF-8, end to end: the example package under a Latin-1
folder (b"caf\\xe9"), a Latin-1 include name and a Latin-1 module folder.

Every command works on them; its --json output is ASCII-safe JSON that carries
each such byte as Python's surrogateescape does ("\\udce9"), so that
os.fsencode of what json.loads gives is the path on disk; its messages show
the byte as \\xe9. The example application and the bundle app (which link the
runtime library) run from such a tree, cache and bundle.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLE

LATIN1 = os.fsdecode(b"caf\xe9")  # "caf\udce9": the folder b"caf\xe9" as a str path
PARTICLES_APP = os.environ.get("CUNUMPY_KERNELS_PARTICLES_APP")
BUNDLE_APP = os.environ.get("CUNUMPY_KERNELS_BUNDLE_APP")
FAKE_LIBCUDA_DIR = os.environ.get("CUNUMPY_KERNELS_FAKE_LIBCUDA_DIR")


def cunumpy_include_dir():
    import cunumpy

    return Path(cunumpy.__file__).parent / "cuda" / "include"


def raw(result):
    """The command's stdout and stderr as bytes decoded strictly: they must be UTF-8 text."""
    return result.stdout + result.stderr


@pytest.fixture
def latin1(tmp_path):
    """The example package copied under tmp_path/b"caf\\xe9"; returns (its src/ folder, a cache there)."""
    root = tmp_path / LATIN1
    shutil.copytree(EXAMPLE, root / "particles", ignore=shutil.ignore_patterns("__pycache__", "__pyccel__"))
    assert os.path.isdir(os.fsencode(tmp_path) + b"/caf\xe9/particles/src")
    return root / "particles" / "src", root / "cache"


def flags(cache):
    return ["--cache-dir", cache, "--cunumpy-include-dir", cunumpy_include_dir()]


def test_build_status_and_check_signatures_report_latin1_paths_as_surrogateescape(run, latin1):
    src, cache = latin1
    # CUDA only, to keep it short: host builds under this tree have tests of their own below.
    report, result = run.json("build", "--only", "cuda", *flags(cache), src, check=0)
    assert report["summary"]["failed"] == 0 and report["summary"]["built"] > 0, result.stderr
    assert "\\udce9" in result.stdout and "internal error" not in result.stderr
    files = {os.fsencode(f["file"]) for job in report["kernels"] for f in job.get("files", [])} or None
    entries = [job["entry"] for job in report["jobs"] if job["kind"] == "cuda"]
    assert entries and all(os.path.isdir(os.fsencode(entry)) for entry in entries)
    assert all(b"/caf\xe9/cache/" in os.fsencode(entry) for entry in entries)
    if files:
        assert all(b"/caf\xe9/particles/" in f and os.path.isfile(f) for f in files)

    again, _ = run.json("build", "--only", "cuda", *flags(cache), src, check=0)
    assert again["summary"]["built"] == 0 and again["summary"]["hit"] > 0  # records and manifests read back

    status, result = run.json("status", "--only", "cuda", *flags(cache), src, check=0)
    assert status["ok"]
    folders = {k["name"]: os.fsencode(k["folder"]) for k in status["kernels"]}
    assert folders["push"] == os.fsencode(src / "particles" / "kernels" / "push")
    states = {a["state"] for k in status["kernels"] for a in k["artifacts"] if a["kind"] == "cuda"}
    assert states == {"built"}, status

    result = run("check-signatures", src, check=0)
    assert "all agree" in result.stderr


def test_messages_show_a_latin1_byte_as_backslash_x(run, latin1):
    src, cache = latin1
    missing = src / "particles" / "kernels" / "gone"
    result = run("status", *flags(cache), missing, check=2)
    assert "caf\\xe9/particles/src/particles/kernels/gone" in result.stderr, raw(result)
    push = src / "particles" / "kernels" / "push" / "push_cuda.cu"
    push.write_text(push.read_text().replace("{", "{ this is not C++;", 1))
    result = run("build", "--only", "cuda", *flags(cache), src, check=1)
    assert "caf\\xe9" in result.stderr and "internal error" not in result.stderr


def test_a_latin1_include_name_is_followed_and_keyed(run, latin1):
    src, cache = latin1
    kernels = src / "particles" / "kernels"
    header = kernels / "push" / os.fsdecode(b"\xe9t\xe9.cuh")
    header.write_text("#define PUSH_SCALE 1.0\n")
    push = kernels / "push" / "push_cuda.cu"
    with open(os.fsencode(push), "r+b") as f:
        text = f.read()
        f.seek(0)
        f.write(b'#include "\xe9t\xe9.cuh"\n' + text)
    report, result = run.json("build", "--only", "cuda", *flags(cache), src, check=0)
    assert report["summary"]["failed"] == 0, result.stderr
    header.write_text("#define PUSH_SCALE 2.0\n")
    report, result = run.json("build", "--only", "cuda", *flags(cache), src, check=0)
    rebuilt = [job for job in report["jobs"] if job["state"] == "built"]
    assert {job["kernel"] for job in rebuilt} == {"push"}, result.stdout
    assert all("\\xe9t\\xe9.cuh" in job["reason"] or "t\udce9.cuh" in job["reason"] for job in rebuilt), rebuilt
    header.unlink()
    result = run("build", "--only", "cuda", *flags(cache), src, check=1)
    assert "\\xe9t\\xe9.cuh" in result.stderr + result.stdout and "internal error" not in result.stderr


def test_a_latin1_module_folder_builds_its_cuda_kernels_and_reports_the_module(run, latin1):
    src, cache = latin1
    kernels = src / "particles" / "kernels"
    (kernels / LATIN1).mkdir()
    (kernels / LATIN1 / "__init__.py").write_text("")
    (kernels / "push").rename(kernels / LATIN1 / "push")
    report, result = run.json("build", "--only", "cuda", *flags(cache), src, check=0)
    modules = {job["module"] for job in report["jobs"] if job["kernel"] == "push"}
    assert modules == {"particles.kernels.caf\udce9.push"}, result.stdout
    status, _ = run.json("status", "--only", "cuda", *flags(cache), src, check=0)
    push = next(k for k in status["kernels"] if k["name"] == "push")
    assert os.fsencode(push["cuda"]).endswith(b"/kernels/caf\xe9/push/push_cuda.cu")
    assert {a["state"] for a in push["artifacts"] if a["kind"] == "cuda"} == {"built"}


def test_host_modules_under_a_latin1_folder_build_into_a_utf8_cache_and_in_place(run, latin1, tmp_path):
    src, _ = latin1
    cache = tmp_path / "utf8-cache"
    report, result = run.json("build", "--only", "host", *flags(cache), src, check=0)
    assert [job["state"] for job in report["jobs"]] == ["built"] * 3, result.stdout
    report, result = run.json("build", "--only", "host", "--in-place", *flags(cache), src, check=0)
    assert [job["state"] for job in report["jobs"]] == ["built"] * 3, result.stdout
    assert list((src / "particles" / "kernels" / "push").glob("push_kernels.*.so")), "no in-place module"


@pytest.mark.parametrize("in_place", [False, True], ids=["cache", "in-place"])
def test_a_cache_root_that_is_not_utf8_fails_host_builds_up_front_and_cuda_builds(run, latin1, in_place):
    """Pyccel 2.2 writes the folder it compiles in (below the cache root, for cache
    and in-place builds alike) into a UTF-8 wrapper: it fails after the compile
    with a UnicodeEncodeError. The plan says so before Pyccel runs."""
    src, cache = latin1
    place = ["--in-place"] if in_place else []
    report, result = run.json("build", *place, *flags(cache), src, check=1)
    host = [job for job in report["jobs"] if job["kind"] in ("host", "in-place")]
    assert len(host) == 3 and {job["state"] for job in host} == {"failed"}, result.stdout
    assert all(job["seconds"] < 1 for job in host), host  # no Pyccel run
    assert all(job["kind"] != "cuda" or job["state"] == "built" for job in report["jobs"]), result.stdout
    assert all(LATIN1 + "/cache, whose path is not UTF-8" in job["log"] for job in host), host
    text = run("build", *place, *flags(cache), src, check=1).stderr
    assert "caf\\xe9/cache, whose path is not UTF-8" in text and "--cache-dir" in text, text
    assert "UnicodeEncodeError" not in text and "internal error" not in text, text


@pytest.mark.parametrize("in_place", [False, True], ids=["cache", "in-place"])
def test_a_module_whose_name_is_not_utf8_fails_its_host_build_before_pyccel_runs(run, latin1, tmp_path, in_place):
    """Pyccel 2.2 writes the module's dotted name into its UTF-8 wrapper too: a
    Latin-1 package folder or module file name. The plan names the file; a module
    importing such a module fails with it; the other modules build."""
    src, _ = latin1
    cache = tmp_path / "utf8-cache"
    kernels = src / "particles" / "kernels"
    (kernels / LATIN1).mkdir()
    (kernels / LATIN1 / "__init__.py").write_text("")
    (kernels / "push").rename(kernels / LATIN1 / "push")
    helper = kernels / "sort" / os.fsdecode(b"h\xe9lper.py")
    helper.write_text("def one() -> int:\n    return 1\n")
    sort = kernels / "sort" / "sort_kernels.py"
    sort.write_bytes(b"from particles.kernels.sort.h\xe9lper import one\n" + sort.read_bytes())
    place = ["--in-place"] if in_place else []
    report, result = run.json("build", "--only", "host", *place, *flags(cache), src, check=1)
    states = {job["module"]: job["state"] for job in report["jobs"]}
    assert states == {"particles.kernels.%s.push" % LATIN1: "failed", "particles.kernels.sort": "failed",
                      "particles.kernels.sort.h\udce9lper": "failed", "particles.kernels.deposit": "built"}, states
    assert all(job["seconds"] < 1 for job in report["jobs"] if job["state"] == "failed"), report["jobs"]
    text = run("build", "--only", "host", *place, *flags(cache), src, check=1).stderr
    assert "'particles.kernels.caf\\xe9.push.push_kernels' is not UTF-8" in text, text
    assert "h\\xe9lper' is not UTF-8" in text, text
    assert "imports particles.kernels.sort.h\\xe9lper, which cannot be built" in text, text
    assert "UnicodeEncodeError" not in text and "internal error" not in text, text


@pytest.mark.skipif(not PARTICLES_APP, reason="CUNUMPY_KERNELS_PARTICLES_APP is not set (run through meson)")
def test_the_example_app_runs_from_a_latin1_tree_and_cache(run, latin1):
    src, cache = latin1
    run("build", "--only", "cuda", *flags(cache), src, check=0)
    env = dict(run.env, LD_LIBRARY_PATH="")
    result = subprocess.run(
        [PARTICLES_APP, "--src", src, "--cache-dir", cache, "--cunumpy-include-dir", cunumpy_include_dir(),
         "--markers", "500"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    # Host builds cannot use a cache whose path is not UTF-8 (below): the app names the kernels it cannot run.
    assert "host: no host version of deposit, push, sort in the cache (`cunumpy-kernels build --only host` " \
           "builds them)" in result.stdout.splitlines(), result.stdout


@pytest.mark.skipif(not BUNDLE_APP or not FAKE_LIBCUDA_DIR, reason="run through meson (the app and the fake driver)")
def test_a_bundle_at_a_latin1_path_is_written_checked_and_launched(run, latin1):
    src, cache = latin1
    run("build", "--only", "cuda", *flags(cache), src, check=0)
    bundle = cache.parent / os.fsdecode(b"k\xe9.ckb")
    report, result = run.json("bundle", "--output", bundle, *flags(cache), src, check=0)
    assert os.fsencode(report["bundle"]) == os.fsencode(bundle), result.stdout
    result = run("status", "--bundle", bundle, *flags(cache), src, check=0)
    assert "k\\xe9.ckb" in result.stdout and "current" in result.stdout
    status, _ = run.json("status", "--bundle", bundle, *flags(cache), src, check=0)
    assert status["current"]
    env = dict(run.env, LD_LIBRARY_PATH=FAKE_LIBCUDA_DIR)
    result = subprocess.run([BUNDLE_APP, bundle], env=env, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    # The app prints load_info().artifact as the bytes it is: "<bundle>#push@<target>".
    loaded = [line for line in result.stdout.splitlines() if line.startswith(b"loaded push")]
    assert loaded and b"artifact=" + os.fsencode(bundle) + b"#push@" in loaded[0]
