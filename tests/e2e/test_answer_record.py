"""A warm `status` answers from its record only while nothing its answer rests on changed.

Each test records an answer (a status more than the racy margin after the last
change, then one that must come from the record), makes one change of the
family a status answer rests on, and checks that the next status plans afresh
and says what a status that never reads the record says. Every status here runs
with CUNUMPY_KERNELS_ANSWER_RECORD=check, which also plans afresh behind each
recorded answer and fails when the two differ.
"""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import CLI, PYTHON

CHECK = {"CUNUMPY_KERNELS_ANSWER_RECORD": "check"}
OFF = {"CUNUMPY_KERNELS_ANSWER_RECORD": "off"}
FROM_RECORD = "answered from the answer record"


def keep_same_size_and_time(path, old, new):
    """Rewrites `path` with `old` replaced by `new` (same length) and its modification time put back."""
    assert len(old) == len(new)
    stat = path.stat()
    path.write_text(path.read_text().replace(old, new, 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size


class Status:
    def __init__(self, run, args):
        self.run, self.args = run, [str(a) for a in args]

    def __call__(self, env=CHECK):
        result = self.run("status", "--json", *self.args, env=env)
        assert result.returncode in (0, 1), result.stderr
        return result

    def recorded(self):
        """An answer planned after the racy margin, then served from the record."""
        time.sleep(2.2)
        planned = self()
        assert FROM_RECORD not in planned.stderr
        served = self()
        assert FROM_RECORD in served.stderr, served.stderr
        assert served.stdout == planned.stdout and served.returncode == planned.returncode
        return served

    def fresh_after_change(self, before):
        """The status after a change: planned afresh, as a status without the record says, and changed."""
        after = self()
        assert FROM_RECORD not in after.stderr
        truth = self(env=OFF)
        assert (after.stdout, after.returncode) == (truth.stdout, truth.returncode)
        assert after.stdout != before.stdout
        again = self()  # kept or not (a removal leaves no times to doubt), the same answer
        assert again.stdout == truth.stdout
        return after


@pytest.fixture
def status(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", cache, "--python", PYTHON, example,
        check=0)
    return Status(run, ["--cache-dir", cache, "--python", PYTHON, example])


def test_a_source_edited_with_its_size_and_time_kept(status, example):
    before = status.recorded()
    keep_same_size_and_time(example / "particles/kernels/push/push_cuda.cu", "double dt", "double DT")
    status.fresh_after_change(before)


def test_a_header_appearing_earlier_in_the_search(status, example):
    before = status.recorded()
    earlier = example / "particles/kernels/push/particles/kernels/common.cuh"
    earlier.parent.mkdir(parents=True)
    shutil.copy(example / "particles/kernels/common.cuh", earlier)
    assert '"state": "stale"' in status.fresh_after_change(before).stdout


def test_a_kernel_folder_added_and_a_package_marker_removed(status, example):
    before = status.recorded()
    scale = example / "particles/kernels/scale"
    scale.mkdir()
    (scale / "scale_kernels.py").write_text("def scale(x: 'float[:]', a: float):\n    x[:] = a * x\n")
    assert '"name": "scale"' in status.fresh_after_change(before).stdout
    before = status.recorded()
    (example / "particles/kernels/__init__.py").unlink()
    status.fresh_after_change(before)


def test_a_cache_entry_removed(status, tmp_path):
    before = status.recorded()
    manifests = sorted((tmp_path / "cache").rglob("manifest.json"))
    assert manifests
    shutil.rmtree(manifests[0].parent)
    assert '"state": "missing"' in status.fresh_after_change(before).stdout


def test_the_configuration_and_the_environment(status, example):
    before = status.recorded()
    config = example.parent / "pyproject.toml"
    config.write_text(config.read_text().replace('arch = ["sm_80", "sm_90"]', 'arch = ["sm_90"]'))
    status.fresh_after_change(before)
    before = status.recorded()
    status.run.env["NVRTC_APPEND_FLAGS"] = "-DPARTICLES_CHECKED=1"  # NVRTC adds them to every compile: part of each CUDA key
    status.fresh_after_change(before)


def test_a_tree_reached_through_a_link_pointed_elsewhere(run, example, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(example, other)
    (other / "particles/kernels/sort/sort_cuda.cu").write_text(
        "__global__ void sort(double* x, long n) {}\n")
    link = tmp_path / "tree"
    link.symlink_to(example)
    status = Status(run, ["--cache-dir", tmp_path / "cache", "--python", PYTHON, link])
    before = status.recorded()
    link.unlink()
    link.symlink_to(other)
    assert "sort_cuda.cu" in status.fresh_after_change(before).stdout


def test_a_header_link_in_an_include_folder_made_again(run, example, tmp_path):
    # rm and ln -s: the new link may get the old one's inode number, so its
    # change time and length are witnesses too (found by a new user's trial).
    include, headers = tmp_path / "include", tmp_path / "headers"
    include.mkdir()
    headers.mkdir()
    (headers / "one.cuh").write_text("#define EXTRA 1\n")
    (headers / "two.cuh").write_text("#define EXTRA 2\n")
    (include / "extra.cuh").symlink_to(headers / "one.cuh")
    cuda = example / "particles/kernels/push/push_cuda.cu"
    cuda.write_text("#include <extra.cuh>\n" + cuda.read_text())
    cache = tmp_path / "cache"
    flags = ["--only", "cuda", "--arch", "sm_90", "--no-ptx", "-I", include, "--cache-dir", cache, "--python", PYTHON]
    run("build", *flags, example, check=0)
    status = Status(run, [*flags, "--require-built", example])
    before = status.recorded()
    assert before.returncode == 0
    (include / "extra.cuh").unlink()
    (include / "extra.cuh").symlink_to(headers / "two.cuh")
    after = status.fresh_after_change(before)
    assert after.returncode == 1 and '"state": "stale"' in after.stdout


# A build with nothing to compile is an answer like status's, with
# bookkeeping: its hit counters and use stamps, which a build printed again
# must do as well.
class Build:
    def __init__(self, run, cache, example):
        self.run, self.cache = run, cache
        self.args = ["build", "--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", cache, "--python", PYTHON,
                     example]

    def __call__(self, env=CHECK):
        return self.run(*self.args, env=env, check=0)

    def kept(self):
        """Compiles, then plans a warm build more than the racy margin later: the first warm build is kept."""
        compiled = self()
        assert "2 built" in compiled.stdout and FROM_RECORD not in compiled.stderr
        time.sleep(2.2)
        planned = self()
        assert "0 built, 2 cached" in planned.stdout and FROM_RECORD not in planned.stderr
        return planned

    def hits(self):
        info, _ = self.run.json("cache", "info", "--cache-dir", self.cache)
        return info["statistics"]["build_hits"]


def without_seconds(summary):
    return summary.rsplit(" in ", 1)[0]


@pytest.fixture
def build(run, example, tmp_path):
    return Build(run, tmp_path / "cache", example)


def test_a_build_that_compiled_is_not_kept_and_a_warm_one_is(build):
    planned = build.kept()
    served = build()
    assert FROM_RECORD in served.stderr, served.stderr
    assert without_seconds(served.stdout) == without_seconds(planned.stdout)


def test_a_build_printed_again_counts_its_hits(build):
    build.kept()
    before = build.hits()
    again = build(env={})
    assert without_seconds(again.stdout).endswith("0 built, 2 cached, 0 failed")
    assert build.hits() == before + 2


def test_a_build_printed_again_refreshes_a_day_old_use_stamp(build):
    build.kept()
    stamps = list(build.cache.glob("**/cuda-used/*"))
    assert len(stamps) == 2
    three_days_ago = time.time() - 3 * 24 * 3600
    for stamp in stamps:
        os.utime(stamp, (three_days_ago, three_days_ago))
    build(env={})
    assert all(stamp.stat().st_mtime > time.time() - 60 for stamp in stamps)


def test_a_build_after_a_source_edit_compiles(build, example):
    build.kept()
    keep_same_size_and_time(example / "particles/kernels/push/push_cuda.cu", "per marker", "per Marker")
    after = build()
    assert FROM_RECORD not in after.stderr and "1 built" in after.stdout


def test_a_build_whose_entry_was_removed_compiles_it_again(build):
    build.kept()
    entries = [p for p in build.cache.glob("**/cuda/*/*") if p.is_dir()]
    assert entries
    for entry in entries:
        shutil.rmtree(entry)
    after = build()
    assert FROM_RECORD not in after.stderr and "2 built" in after.stdout


# check-signatures, the pre-commit hook, runs on every commit: a check of an
# unchanged tree is printed again too.
def test_a_check_of_an_unchanged_tree_is_printed_again_and_an_edit_is_seen(run, example):
    def check(env=CHECK, *args):
        return run("check-signatures", *args, example, env=env)

    check()
    time.sleep(2.2)
    planned = check()
    assert planned.returncode == 0 and FROM_RECORD not in planned.stderr
    served = check()
    assert FROM_RECORD in served.stderr, served.stderr
    assert (served.stdout, served.returncode) == (planned.stdout, planned.returncode)
    # The Python side's parameter renamed, the file's size and time kept: the two now differ.
    keep_same_size_and_time(example / "particles/kernels/push/push_kernels.py", "dt: float", "dT: float")
    after = check()
    assert FROM_RECORD not in after.stderr and after.returncode == 1
    truth = check(OFF)
    assert (after.stdout, after.returncode) == (truth.stdout, truth.returncode)
    json_check = check(CHECK, "--format", "json")
    assert json_check.returncode == 1


# What a plan learns besides files: the kernel release and the C library's
# version (the Python probe keys on both), part of every answer's key.
@pytest.mark.skipif(shutil.which("setarch") is None, reason="needs setarch (util-linux)")
def test_a_build_under_another_kernel_release_plans_again(build):
    planned = build.kept()
    other_kernel = subprocess.run(["setarch", os.uname().machine, "--uname-2.6", CLI, *map(str, build.args)],
                                  env=dict(build.run.env, **CHECK), capture_output=True, text=True, timeout=600)
    assert other_kernel.returncode == 0, other_kernel.stderr
    assert FROM_RECORD not in other_kernel.stderr
    assert without_seconds(other_kernel.stdout) == without_seconds(planned.stdout)


# A tmpfs under /dev holds files like any other folder.
@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="needs a writable /dev/shm")
def test_a_tree_under_dev_shm_is_witnessed(run, example):
    shm = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="ck-test-"))
    try:
        tree = shm / "src"
        shutil.copytree(example, tree)
        shm_build = Build(run, shm / "cache", tree)
        shm_build.kept()
        assert FROM_RECORD in shm_build().stderr
        with open(tree / "particles/kernels/push/push_cuda.cu", "a") as source:
            source.write("// edited\n")
        time.sleep(2.2)
        after = shm_build()
        assert FROM_RECORD not in after.stderr and "1 built" in after.stdout
    finally:
        shutil.rmtree(shm)
