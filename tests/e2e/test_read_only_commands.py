"""Planning writes nothing: `build --dry-run`, `status` and `bundle` plan as a
build does, and leave the cache as they found it (no root made, no tag, no
tool answer, no hit or failure remembered, no stale temporary swept, no
cunumpy name re-pointed); a build applies those writes before compiling.
`status` may refresh the record of source digests, as `git status` refreshes
its index; `build --dry-run` and `bundle` do not.
"""

import os
import time

import pytest


def snapshot(folder):
    """Every path under `folder` with its kind, size and modification time."""
    found = {}
    for parent, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(parent, name)
            info = os.lstat(path)
            found[os.path.relpath(path, folder)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


def read_only_commands(tmp_path, example):
    """Each command that plans without building, as a user types it."""
    return {
        "build --dry-run": ["build", "--dry-run", example],
        "build --dry-run --only cuda": ["build", "--dry-run", "--only", "cuda", example],
        "build --dry-run --only host": ["build", "--dry-run", "--only", "host", example],
        "status": ["status", example],
        "status --only cuda": ["status", "--only", "cuda", example],
        "bundle": ["bundle", "-o", tmp_path / "out" / "particles.ckb", example],
    }


@pytest.fixture
def cache(run):
    return run.home / ".cache" / "particles" / "kernels"


@pytest.fixture
def record(run):
    return run.home / ".cache" / "cunumpy-kernels" / "sources.record"


def test_on_a_fresh_machine_no_read_only_command_makes_the_cache(run, example, cache, record, tmp_path):
    def written():
        return record.stat().st_mtime_ns if record.exists() else None

    for name, args in read_only_commands(tmp_path, example).items():
        before = written()
        run(*args)
        assert not cache.parent.exists(), f"{name} made {cache.parent}"
        # Only status keeps the record of source digests (made with its folders where missing).
        if not name.startswith("status"):
            assert written() == before, f"{name} wrote {record}"


def test_over_a_cache_with_hits_misses_and_a_stale_temporary_nothing_changes(run, example, cache, record, tmp_path):
    run("build", "--only", "cuda", example, check=0)
    # A temporary a killed build left two days ago, and a kernel edited since the build.
    stale = cache / ".cunumpy-kernels-tmp" / "entry.1.deadbeef.tmp"
    stale.mkdir(parents=True)
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(stale, (two_days_ago, two_days_ago))
    push = example / "particles" / "kernels" / "push" / "push_cuda.cu"
    push.write_text(push.read_text() + "\n// edited\n")
    # The record trusts a file's stat only once its modification and change
    # times are 2 s old (the change time cannot be set back): past that, the
    # next status takes in every file of the tree, not whichever comes later.
    time.sleep(2.5)
    run("status", example)  # takes in the edit, once
    before_cache, before_record = snapshot(cache), record.read_bytes()
    for name, args in read_only_commands(tmp_path, example).items():
        run(*args)
        assert snapshot(cache) == before_cache, f"{name} changed the cache"
        assert record.read_bytes() == before_record, f"{name} changed {record}"
    report, _ = run.json("build", "--only", "cuda", example, check=0)
    assert {j["state"] for j in report["jobs"]} == {"hit", "built"}
    assert not stale.exists(), "the build sweeps what planning found stale"


def test_the_tools_answers_are_kept_by_a_build_not_by_a_dry_run(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--dry-run", "--only", "cuda", "--cache-dir", cache, example, check=0)
    assert not cache.exists()
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    assert any((cache / ".probes").iterdir())
    assert (cache / "CACHEDIR.TAG").exists()
