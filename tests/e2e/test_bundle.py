"""Bundles: `cunumpy-kernels bundle` writes one file from the cache `build`
filled; a rank (tests/e2e/bundle_app.cpp, over the fake libcuda.so.1) opens
the catalog from it with KernelCatalog::from_bundle and launches, reading
nothing of the tree or the cache; `status --bundle` says when it is stale.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

APP = os.environ.get("CUNUMPY_KERNELS_BUNDLE_APP")
FAKE_LIBCUDA_DIR = os.environ.get("CUNUMPY_KERNELS_FAKE_LIBCUDA_DIR")
STRACE = shutil.which("strace")

pytestmark = pytest.mark.skipif(not APP or not FAKE_LIBCUDA_DIR, reason="run through meson (the app and the fake driver)")


def cunumpy_include_dir():
    """cunumpy's CUDA headers, which the example's deposit includes (scripts/setup installs cunumpy)."""
    import cunumpy

    return Path(cunumpy.__file__).parent / "cuda" / "include"


@pytest.fixture
def built(run, example, tmp_path):
    """The example built for sm_80, sm_90 and compute_90 into tmp_path/cache; returns the flags bundle needs."""
    flags = ["--cache-dir", tmp_path / "cache", "--cunumpy-include-dir", cunumpy_include_dir()]
    run("build", "--only", "cuda", *flags, example, check=0)
    return flags


def run_app(run, bundle, prefix=(), env=None):
    env = dict(run.env, LD_LIBRARY_PATH=FAKE_LIBCUDA_DIR, **(env or {}))
    return subprocess.run([*prefix, APP, str(bundle)], env=env, capture_output=True, text=True, timeout=120)


def flip_byte(path, from_end):
    data = bytearray(path.read_bytes())
    data[len(data) - from_end] ^= 0x5A
    path.write_bytes(bytes(data))


def test_a_rank_opens_the_bundle_and_launches_with_the_tree_and_cache_gone(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    report, _ = run.json("bundle", "--output", bundle, *built, example, check=0)
    assert report["kernels"] == 3 and report["with_cuda"] == 2
    assert report["targets"] == ["sm_80", "sm_90", "compute_90"]
    assert report["artifacts"] == 6
    assert bundle.read_bytes().startswith(b"cunumpy-kernels-bundle 1 ")
    (tmp_path / "particles").rename(tmp_path / "moved")
    (tmp_path / "cache").rename(tmp_path / "cache-moved")
    result = run_app(run, bundle)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "CUDA kernels: 2 of 3 (missing: sort)"
    loaded = {line.split()[1]: dict(word.split("=", 1) for word in line.split()[2:] if "=" in word)
              for line in lines if line.startswith("loaded ")}
    assert set(loaded) == {"deposit", "push"}
    assert "how=bundle cubin target=sm_90" in next(line for line in lines if line.startswith("loaded push"))
    assert loaded["push"]["artifact"] == f"{bundle}#push@sm_90"
    assert len(loaded["push"]["key"]) == 64
    assert "sort fallbacks=1" in lines


def test_status_bundle_is_current_then_names_the_kernel_whose_source_changed(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *built, example, check=0)
    result = run("status", "--bundle", bundle, *built, check=0)  # the trees it was made from
    assert ": current, 3 kernels" in result.stdout
    status, _ = run.json("status", "--bundle", bundle, *built, example, check=0)
    assert status["current"] and status["ok"] and status["failed_gates"] == []

    push = example / "particles" / "kernels" / "push" / "push_cuda.cu"
    push.write_text(push.read_text() + "// edited\n")
    result = run("status", "--bundle", bundle, *built, example, check=1)
    assert "stale" in result.stdout
    assert "changed particles.kernels.push: " in result.stdout
    assert "sm_80: changed (source " in result.stdout
    assert "is stale: run cunumpy-kernels build, then cunumpy-kernels bundle" in result.stderr
    status, _ = run.json("status", "--bundle", bundle, *built, example, check=1)
    assert status["changed"] == ["particles.kernels.push"]
    assert status["added"] == [] and status["removed"] == []
    assert not status["ok"]

    shutil.rmtree(example / "particles" / "kernels" / "sort")
    status, _ = run.json("status", "--bundle", bundle, *built, example, check=1)
    assert status["removed"] == ["particles.kernels.sort"]


def test_status_bundle_refuses_flags_that_choose_other_targets(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *built, example, check=0)
    result = run("status", "--bundle", bundle, "--arch", "sm_80", example, check=2)
    assert "--bundle: the bundle names its targets" in result.stderr


def test_status_bundle_takes_the_compiler_and_options_from_the_bundle(run, example, built, tmp_path):
    flags = [*built, "--arch", "sm_90", "--no-ptx", "--compiler-option=-DNDEBUG"]
    run("build", "--only", "cuda", *flags, example, check=0)
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *flags, example, check=0)
    cache_only = built[:2]  # --cache-dir: neither the option nor cunumpy's header folder
    result = run("status", "--bundle", bundle, *cache_only, check=0)
    assert ": current, 3 kernels" in result.stdout
    for flag in (["--compiler", "nvcc"], ["--compiler-option=-O2"], ["--require-built"]):
        result = run("status", "--bundle", bundle, *cache_only, *flag, check=2)
        assert "--bundle: the bundle names its targets, compiler and compiler options" in result.stderr


def test_bundle_refuses_an_empty_tree_and_an_output_it_cannot_write(run, example, built, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("bundle", "--output", tmp_path / "e.ckb", *built, empty, check=2)
    assert f"no kernels under {empty}" in result.stderr
    assert not (tmp_path / "e.ckb").exists()
    result = run("bundle", "--output", tmp_path, *built, example, check=2)
    assert f"{tmp_path} names a folder: give --output the bundle's file name" in result.stderr
    result = run("bundle", "--output", tmp_path / "no" / "such" / "k.ckb", *built, example, check=2)
    assert f"{tmp_path / 'no' / 'such'} does not exist; create it first" in result.stderr
    (tmp_path / "a-file").write_text("")
    result = run("bundle", "--output", tmp_path / "a-file" / "k.ckb", *built, example, check=2)
    assert f"{tmp_path / 'a-file'} is not a folder" in result.stderr


def test_a_corrupt_byte_is_an_artifact_error_at_load_never_a_crash(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, "--arch", "sm_90", "--no-ptx", *built, example, check=0)
    flip_byte(bundle, 100)  # inside the last artifact: push's sm_90 cubin
    status = run("status", "--bundle", bundle, *built, example, check=1)
    assert f"corrupt particles.kernels.push: sm_90: corrupt (checksum mismatch in {bundle}#push@sm_90)" in status.stdout
    result = run_app(run, bundle)
    assert result.returncode == 3, result.stderr
    assert "ArtifactError: kernel 'push': nothing in the bundle fits CUDA device 0" in result.stderr
    assert f"{bundle}#push@sm_90: checksum mismatch" in result.stderr

    run("bundle", "--output", bundle, *built, example, check=0)
    data = bytearray(bundle.read_bytes())
    data[data.index(b"particles.kernels.push")] ^= 0x20
    bundle.write_bytes(bytes(data))
    result = run_app(run, bundle)
    assert result.returncode == 3, result.stderr
    assert f"ArtifactError: {bundle}: corrupt header" in result.stderr


def test_bundling_a_target_the_cache_lacks_names_kernel_and_target_and_says_to_build(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    result = run("bundle", "--output", bundle, "--arch", "sm_75,sm_90", *built, example, check=1)
    assert "kernel 'push' (particles.kernels.push) for sm_75: no entry" in result.stderr
    assert "kernel 'deposit' (particles.kernels.deposit) for sm_75" in result.stderr
    assert "run cunumpy-kernels build with the same paths and options" in result.stderr
    assert not bundle.exists()
    assert run("bundle", *built, example, check=2).stderr.count("--output") >= 1


@pytest.mark.skipif(not STRACE, reason="strace is not installed")
def test_opening_a_bundle_touches_one_file_and_nothing_of_the_tree_or_cache(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *built, example, check=0)
    log = tmp_path / "strace.log"
    calls = ("openat,open,creat,stat,lstat,newfstatat,statx,access,faccessat,faccessat2,readlink,readlinkat,getdents64,"
             "execve,read")
    # LeakSanitizer (the sanitizer build) refuses to run under ptrace.
    no_leak_check = {"ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))}
    result = run_app(run, bundle, prefix=[STRACE, "-f", "-e", f"trace={calls}", "-o", str(log)], env=no_leak_check)
    if result.returncode != 0 and "PTRACE" in result.stderr.upper():
        pytest.skip(f"strace cannot trace here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr
    lines = log.read_text().splitlines()
    tree, cache = str(tmp_path / "particles"), str(tmp_path / "cache")
    assert [line for line in lines if tree in line or cache in line or "pyproject.toml" in line] == []
    on_bundle = [line for line in lines if f'"{bundle}"' in line]
    assert len(on_bundle) == 1 and "openat(" in on_bundle[0], on_bundle
    assert len([line for line in lines if 'read(' in line and '"cunumpy-kernels-bundle 1 ' in line]) == 1
    assert len([line for line in lines if "execve(" in line]) == 1  # the app itself: no process started
