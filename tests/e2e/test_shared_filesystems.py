"""A cache and bundles on a network file system, with the faults injected on the local one.

Opens that fail with ESTALE ("Stale file handle"), as an NFS client's do while
another node replaces a file, come from an LD_PRELOAD shim
(tests/e2e/estale_shim.cpp): a few are tried again and the command goes on; one
that keeps failing is exit 75 (try again), never "stale" (1), never a bad entry
removed. doc/shared-filesystems.md says what each file system promises.
"""

import os
from pathlib import Path

import pytest

SHIM = os.environ.get("CUNUMPY_KERNELS_ESTALE_SHIM")
TRY_AGAIN = 75  # EX_TEMPFAIL

pytestmark = pytest.mark.skipif(not SHIM, reason="run through meson (needs the ESTALE shim)")


def stale(suffix=None, count=None, folder=None):
    """The environment that makes opens of paths ending in `suffix`, or of files in a folder named `folder`, fail
    with ESTALE (`count` times, else always)."""
    env = {"LD_PRELOAD": SHIM, "CK_ESTALE_SUFFIX": suffix or "", "CK_ESTALE_FOLDER": folder or ""}
    # Under AddressSanitizer (the sanitizer build of scripts/test) the shim comes before ASan's runtime,
    # which ASan refuses unless told; its interceptors still run, behind the shim's open.
    asan = os.environ.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = f"{asan}:verify_asan_link_order=0" if asan else "verify_asan_link_order=0"
    if count is not None:
        env["CK_ESTALE_COUNT"] = str(count)
    return env


@pytest.fixture
def warm(run, example, tmp_path):
    """The example's CUDA side built once into tmp_path/cache; returns the build's flags."""
    flags = ["--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", tmp_path / "cache"]
    run("build", *flags, example, check=0)
    return flags


def manifests(cache):
    return sorted(cache.glob("cuda/*/*/manifest.json"))


def test_a_warm_build_tries_a_stale_manifest_again_and_finds_every_entry(run, example, warm):
    for count in (1, 4):  # fewer failures than the 5 tries
        report, result = run.json("build", *warm, example, env=stale("manifest.json", count), check=0)
        assert {job["state"] for job in report["jobs"]} == {"hit"}, result.stderr


def test_a_build_whose_manifest_reads_stay_stale_exits_75_not_1(run, example, warm):
    result = run("build", *warm, example, env=stale("manifest.json"))
    assert result.returncode == TRY_AGAIN, result.stderr
    assert "Stale file handle" in result.stderr and "run the command again" in result.stderr
    assert "manifest.json" in result.stderr


def test_cache_verify_exits_75_and_removes_nothing_while_manifests_are_stale(run, example, warm, tmp_path):
    cache = tmp_path / "cache"
    before = manifests(cache)
    assert before
    result = run("cache", "verify", "--fix", "--cache-dir", cache, env=stale("manifest.json"))
    assert result.returncode == TRY_AGAIN, result.stdout + result.stderr
    assert manifests(cache) == before, "a stale read is no bad entry"
    run("cache", "verify", "--cache-dir", cache, env=stale("manifest.json", 3), check=0)


def test_status_bundle_tells_try_again_from_stale(run, example, warm, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *[flag for flag in warm if flag not in ("--only", "cuda")], example, check=0)
    flags = ["--cache-dir", tmp_path / "cache"]
    run("status", "--bundle", bundle, *flags, example, env=stale("kernels.ckb", 4), check=0)  # current
    result = run("status", "--bundle", bundle, *flags, example, env=stale("kernels.ckb"))
    assert result.returncode == TRY_AGAIN, result.stdout + result.stderr
    assert "Stale file handle" in result.stderr
    assert "stale:" not in result.stderr, "not the bundle's 'stale' (rebuild)"


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({"suffix": "@sm_90"}, id="the key a kernel had last (cuda-last)"),
        pytest.param({"folder": ".probes"}, id="a tool's probe answer (.probes)"),
    ],
)
def test_a_stale_best_effort_record_is_a_miss_of_that_record_not_exit_75(run, example, warm, record):
    # Records that builders on other nodes rewrite: what they save is worked out again.
    report, result = run.json("build", *warm, example, env=stale(**record), check=0)
    assert {job["state"] for job in report["jobs"]} == {"hit"}, result.stderr
    run("status", *warm, example, env=stale(**record), check=0)


def test_a_lock_create_that_fails_with_estale_is_tried_again_and_the_build_keeps_its_lock(run, example, tmp_path):
    flags = ["--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", tmp_path / "cache"]
    report, result = run.json("build", *flags, example, env=stale(".lock", 2), check=0)
    assert {job["state"] for job in report["jobs"]} == {"built"}, result.stderr
    assert not any("cannot create the build lock" in warning for warning in report["warnings"]), report["warnings"]
