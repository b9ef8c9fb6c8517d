"""Bundles: `cunumpy-kernels bundle` writes one file from the cache `build`
filled; a rank (tests/e2e/bundle_app.cpp, over the fake libcuda.so.1) opens
the catalog from it with KernelCatalog::from_bundle and launches, reading
nothing of the tree or the cache; `status --bundle` says when it is stale,
and both refuse an artifact that fails build's load checks.
"""

import hashlib
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


def read_header(path):
    """The bundle's JSON header and its artifact bytes (doc/bundle.md, "The bundle format")."""
    data = path.read_bytes()
    end = data.index(b"\n")
    header_size = int(data[:end].split(b" ")[2])
    return json.loads(data[end + 1:end + 1 + header_size]), data[end + 1 + header_size:]


def rewrite_header(path, edit, version=2):
    """Edits the bundle's header with edit(header, artifact_bytes) and writes it back with every checksum
    recomputed, as a writer with a bug (or a hand edit) would: only the load checks can tell."""
    header, blob = read_header(path)
    edit(header, blob)
    text = json.dumps(header).encode()
    digest = hashlib.sha256(text).hexdigest()
    path.write_bytes(b"cunumpy-kernels-bundle %d %d %s\n" % (version, len(text), digest.encode()) + text + blob)


def artifact(header, kernel, target):
    return next(a for k in header["kernels"] if k["name"] == kernel for a in k["artifacts"] if a["target"] == target)


def point_at(record, other):
    """Makes `record` name the bytes of `other`: offset, size and checksum."""
    record.update(offset=other["offset"], size=other["size"], sha256=other["sha256"])


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
    assert bundle.read_bytes().startswith(b"cunumpy-kernels-bundle 2 ")
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


def test_status_bundle_of_a_bundle_not_made_yet_says_to_make_it(run, example, built, tmp_path):
    """A job script's `status --bundle B || { build; bundle; }` covers the first run: missing is 1, as stale."""
    bundle = tmp_path / "not-yet" / "kernels.ckb"
    result = run("status", "--bundle", bundle, *built, example, check=1)
    assert f"there is no bundle at {bundle}: run cunumpy-kernels build, then cunumpy-kernels bundle -o" in result.stderr
    status, _ = run.json("status", "--bundle", bundle, *built, example, check=1)
    assert status["state"] == "missing" and not status["current"] and not status["ok"]
    assert status["failed_gates"] and str(bundle) in status["failed_gates"][0]


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
    assert f"corrupt particles.kernels.push: sm_90: corrupt ({bundle}#push@sm_90: checksum mismatch (" in status.stdout
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
    assert len([line for line in lines if 'read(' in line and '"cunumpy-kernels-bundle 2 ' in line]) == 1
    assert len([line for line in lines if "execve(" in line]) == 1  # the app itself: no process started


def swap_kernels(header, blob):
    for target in ("sm_80", "sm_90", "compute_90"):
        push, deposit = artifact(header, "push", target), artifact(header, "deposit", target)
        saved = dict(push)
        point_at(push, deposit)
        point_at(deposit, saved)


def relabel_architectures(header, blob):
    sm_80, sm_90 = artifact(header, "push", "sm_80"), artifact(header, "push", "sm_90")
    sm_80["target"], sm_90["target"] = "sm_90", "sm_80"


def cut_short(header, blob):
    cubin = artifact(header, "push", "sm_90")
    cubin["size"] -= 200
    cubin["sha256"] = hashlib.sha256(blob[cubin["offset"]:cubin["offset"] + cubin["size"]]).hexdigest()


def ptx_of_another_entry(header, blob):
    point_at(artifact(header, "push", "compute_90"), artifact(header, "deposit", "compute_90"))


@pytest.mark.parametrize("edit,target,finding", [
    (swap_kernels, "sm_90", "check 'entry' failed: the cubin defines no function '"),
    (relabel_architectures, "sm_90", "check 'architecture' failed: the cubin is for sm_80"),
    (cut_short, "sm_90", "check 'complete' failed: the file is "),
    (ptx_of_another_entry, "compute_90", "check 'ptx entry' failed: the PTX has no .entry "),
])
def test_a_header_that_misfiles_artifacts_is_corrupt_for_status_and_never_loaded(run, example, built, tmp_path, edit,
                                                                                  target, finding):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *built, example, check=0)
    rewrite_header(bundle, edit)
    result = run("status", "--bundle", bundle, check=1)
    assert "corrupt particles.kernels.push: " in result.stdout, result.stdout
    assert f"{target}: corrupt ({bundle}#push@{target}: {finding}" in result.stdout, result.stdout
    assert f"the bundle {bundle} is damaged" in result.stderr
    status, _ = run.json("status", "--bundle", bundle, check=1)
    assert "particles.kernels.push" in status["corrupt"] and not status["ok"]

    app = run_app(run, bundle)
    if edit is swap_kernels:  # every target of push misfiled: nothing loads, and the error says what to do
        assert app.returncode == 3, app.stderr
        assert "ArtifactError: kernel 'push': nothing in the bundle fits CUDA device 0" in app.stderr
        assert f"{bundle}#push@sm_90: {finding}" in app.stderr
        assert "make the bundle again (cunumpy-kernels build, then cunumpy-kernels bundle" in app.stderr
    else:  # another target of push serves; the refused one was never handed to the driver
        assert app.returncode == 0, app.stderr
        push = next(line for line in app.stdout.splitlines() if line.startswith("loaded push"))
        assert f"target={target}" not in push


def test_status_bundle_computes_keys_in_the_cache_it_was_made_from(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *built, example, check=0)
    result = run("status", "--bundle", bundle, check=0)  # no --cache-dir: the bundle's
    assert ": current, 3 kernels" in result.stdout
    status, _ = run.json("status", "--bundle", bundle, check=0)
    assert status["cache_root"] == str(tmp_path / "cache")
    other = tmp_path / "other-cache"
    other.mkdir()
    status, _ = run.json("status", "--bundle", bundle, "--cache-dir", other, check=1)  # given: that cache, never built
    assert status["unknown"] and status["cache_root"] == str(other)
    (tmp_path / "cache").rename(tmp_path / "cache-moved")
    result = run("status", "--bundle", bundle, check=1)
    assert f"made from the cache {tmp_path / 'cache'}, which is not here: pass --cache-dir" in result.stderr


def test_a_version_1_bundle_still_opens_and_status_needs_its_cache_dir(run, example, built, tmp_path):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *built, example, check=0)
    rewrite_header(bundle, lambda header, blob: [header.pop("cache_root"), header.pop("toolkit")], version=1)
    result = run_app(run, bundle)
    assert result.returncode == 0, result.stderr
    assert "how=bundle cubin target=sm_90" in result.stdout
    assert ": current, 3 kernels" in run("status", "--bundle", bundle, *built, check=0).stdout
    rewrite_header(bundle, lambda header, blob: None, version=3)
    result = run_app(run, bundle)
    assert result.returncode == 3
    assert "bundle format version 3, but this library reads versions 1 to 2" in result.stderr
    assert "(cunumpy-kernels bundle)" in result.stderr


def linked_toolkit(tmp_path, real_root):
    """Another toolkit folder: the same files, its libraries under another real path (hard links), so that
    the cache holds no record of its NVRTC, as after installing another toolkit."""
    root = tmp_path / "other-toolkit"
    root.mkdir()
    for entry in Path(real_root).resolve().iterdir():
        if entry.name not in ("lib", "lib64"):
            (root / entry.name).symlink_to(entry)
    (root / "lib").mkdir()
    (root / "lib64").symlink_to("lib")
    for entry in (Path(real_root) / "lib64").resolve().iterdir():
        if entry.is_symlink():  # libnvrtc.so.13 -> libnvrtc.so.13.0.48: resolved in the new folder
            (root / "lib" / entry.name).symlink_to(os.readlink(entry))
            continue
        if entry.is_dir():
            (root / "lib" / entry.name).symlink_to(entry)
            continue
        try:
            os.link(entry, root / "lib" / entry.name)
        except OSError:  # another file system
            shutil.copy2(entry, root / "lib" / entry.name)
    return root


@pytest.mark.parametrize("choose", ["--cuda-root", "CUDA_PATH"])
def test_status_bundle_with_another_toolkit_names_both(run, example, built, tmp_path, choose):
    bundle = tmp_path / "kernels.ckb"
    run("bundle", "--output", bundle, *built, example, check=0)
    made = read_header(bundle)[0]["toolkit"]
    assert made["compiler"].startswith("nvrtc ")
    other = linked_toolkit(tmp_path, made["root"])
    flags, env = ([choose, other], None) if choose == "--cuda-root" else ([], {"CUDA_PATH": str(other)})
    result = run("status", "--bundle", bundle, *flags, env=env, check=1)
    found_by = "cuda-root" if choose == "--cuda-root" else "$CUDA_PATH"
    assert (f"toolkit: the bundle was made with {made['compiler']} of the CUDA toolkit {made['root']} "
            f"(found by {made['found_by']}); status finds {other} (found by {found_by})") in result.stdout, result.stdout
    assert f"unknown (the toolkit is not the bundle's {made['root']})" in result.stdout
    assert "build` once" not in result.stdout + result.stderr
    assert f"was made with another CUDA toolkit: give status --cuda-root {made['root']}" in result.stderr
    status, _ = run.json("status", "--bundle", bundle, *flags, env=env, check=1)
    assert status["toolkit"]["now"] == {"root": str(other), "found_by": found_by}
    assert status["toolkit"]["bundle"] == made
