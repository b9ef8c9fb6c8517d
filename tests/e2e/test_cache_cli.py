"""`cunumpy-kernels cache` on a cache built by `build`."""

import hashlib
import json
import os
import pwd
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from conftest import CLI, PYTHON, jobs_by_state, process_scope


def test_info_list_verify_prune(run, example, tmp_path):
    cache = tmp_path / "cache"
    report, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    info = json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)
    assert info["entries"] == 6 and info["by_kind"] == {"cuda": 6}
    listing = json.loads(run("cache", "list", "--json", "--cache-dir", cache, check=0).stdout)
    assert {e["key"] for e in listing} == {j["key"] for j in report["jobs"]}
    assert "0 bad entries" in run("cache", "verify", "--cache-dir", cache, check=0).stdout

    artifact = Path(report["jobs"][0]["artifacts"][0])
    artifact.write_bytes(artifact.read_bytes()[:-1] + b"\0")
    result = run("cache", "verify", "--cache-dir", cache)
    assert result.returncode == 1 and "SHA-256 mismatch" in result.stdout
    result = run("cache", "verify", "--fix", "--cache-dir", cache, check=0)
    assert "(removed)" in result.stdout
    rebuilt, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    assert len(jobs_by_state(rebuilt, "built")) == 1

    assert "would remove 6 entries" in run("cache", "prune", "--max-size", "0", "-n", "--cache-dir", cache, check=0).stdout
    assert "removed 6 entries" in run("cache", "prune", "--max-size", "0", "--cache-dir", cache, check=0).stdout
    assert json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)["entries"] == 0
    assert run("cache", "prune", "--cache-dir", cache).returncode == 2


def test_export_import_moves_a_warm_cache(run, example, tmp_path):
    run("build", "--only", "cuda", "--cache-dir", tmp_path / "login", example, check=0)
    archive = tmp_path / "kernels.tar.zst"
    assert "exported 6 entries" in run("cache", "export", archive, "--cache-dir", tmp_path / "login", check=0).stdout
    assert "imported 6 entries" in run("cache", "import", archive, "--cache-dir", tmp_path / "node", check=0).stdout
    report, _ = run.json("build", "--only", "cuda", "--cache-dir", tmp_path / "node", example, check=0)
    assert len(jobs_by_state(report, "hit")) == 6


def test_only_export_and_import_load_libarchive_and_a_broken_one_is_named_with_the_fix(run, example, tmp_path):
    """A libarchive.so.13 without libarchive's functions, found first: status and build do not load
    it; export and import fail with its path and what they need, and write nothing."""
    fake = tmp_path / "fake-lib"
    fake.mkdir()
    source = tmp_path / "empty.c"
    source.write_text("int not_libarchive(void) { return 0; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", fake / "libarchive.so.13", source], check=True)
    env = {"LD_LIBRARY_PATH": str(fake)}
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, env=env, check=0)
    run("status", "--only", "cuda", "--cache-dir", cache, example, env=env, check=0)
    archive = tmp_path / "kernels.tar.zst"
    for command in (["export", archive], ["import", archive]):
        result = run("cache", *command, "--cache-dir", cache, env=env, check=1)
        assert str(fake / "libarchive.so.13") + " is not libarchive" in result.stderr, result.stderr
        assert "take that file's folder off LD_LIBRARY_PATH" in result.stderr
    assert not archive.exists()

    # A file of that name that does not load at all: the next name, the system's libarchive.so, serves.
    junk = tmp_path / "junk-lib"
    junk.mkdir()
    (junk / "libarchive.so.13").write_text("junk")
    result = run("cache", "export", archive, "--cache-dir", cache, env={"LD_LIBRARY_PATH": str(junk)}, check=0)
    assert "exported 6 entries" in result.stdout


def test_import_refuses_a_hostile_archive(run, tmp_path):
    evil = tmp_path / "evil.tar"
    payload = tmp_path / "payload"
    payload.write_text("x")
    with tarfile.open(evil, "w") as tar:
        tar.add(payload, arcname="../../outside")
    result = run("cache", "import", evil, "--cache-dir", tmp_path / "cache")
    assert result.returncode == 1 and "is not a cache file" in result.stderr
    assert not (tmp_path / "outside").exists()
    # Refused before the cache is located for writing: no folder is left behind.
    assert not (tmp_path / "cache").exists()
    missing = run("cache", "import", tmp_path / "missing.tar.zst", "--cache-dir", tmp_path / "new" / "cache")
    assert missing.returncode == 1 and "missing.tar.zst" in missing.stderr
    assert not (tmp_path / "new").exists()


def test_the_cache_of_a_tree_is_found_from_its_package(run, example):
    result = run("cache", "dir", "--tree", example, check=0)
    assert result.stdout.strip() == str(run.home / ".cache" / "particles" / "kernels")
    result = run("cache", "dir", "--tree", example, env={"PARTICLES_KERNEL_CACHE": "/somewhere"}, check=0)
    assert result.stdout.strip() == "/somewhere"


def cache_info(run, cache):
    return json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)


def test_host_entries_3_listed_verified_pruned_1_superseded_and_left_out_of_export(run, example, tmp_path):
    cache = tmp_path / "cache"
    build = ["build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, example]
    run(*build, check=0)
    info = cache_info(run, cache)
    assert info["by_kind"] == {"host": 3} and info["superseded"] == 0 and info["bytes_by_kind"]["host"] > 10_000
    listing = json.loads(run("cache", "list", "--json", "--cache-dir", cache, check=0).stdout)
    assert [(e["kind"], e["current"], e["linked"]) for e in listing] == [("host", True, True)] * 3

    export = run("cache", "export", tmp_path / "k.tar.zst", "--cache-dir", cache, check=0)
    assert "exported 0 entries" in export.stdout and "left out 3" in export.stdout
    assert export.stderr.count("host (Pyccel) build of particles.kernels.") == 3
    assert "holds absolute paths into " + str(cache) in export.stderr

    push = example / "particles" / "kernels" / "push" / "push_kernels.py"
    push.write_text(push.read_text() + "\n# edited\n")
    run(*build, check=0)
    info = cache_info(run, cache)
    assert info["entries"] == 4 and info["superseded"] == 1
    old = next(e for e in json.loads(run("cache", "list", "--json", "--cache-dir", cache, check=0).stdout)
               if not e["current"])
    dry = run("cache", "prune", "--max-size", "0", "-n", "--cache-dir", cache, check=0)
    # Linked entries are never removed, whatever the size: only the superseded build would go.
    assert f"would remove {old['dir']} (host {old['module']}, superseded" in dry.stdout
    assert "would remove 1 entries" in dry.stdout and "3 of 4 entries left" in dry.stdout
    pruned = run("cache", "prune", "--superseded", "--cache-dir", cache, check=0)
    assert "removed 1 entries" in pruned.stdout and "3 of 4 entries left" in pruned.stdout
    assert not Path(old["dir"]).exists() and cache_info(run, cache)["entries"] == 3
    names = [path for path in cache.iterdir() if path.is_symlink()]
    assert len(names) == 3 and all(path.exists() for path in names)  # the old text's name went with its build
    assert "0 built, 3 cached" in run(*build, check=0).stdout

    listing = json.loads(run("cache", "list", "--json", "--cache-dir", cache, check=0).stdout)
    extension = next(path for e in listing for path in Path(e["dir"]).rglob("push_kernels*.so"))
    extension.write_bytes(b"")
    result = run("cache", "verify", "--cache-dir", cache)
    assert result.returncode == 1 and "1 bad entry" in result.stdout
    assert "push_kernels" in result.stdout and ": 0 bytes, manifest says" in result.stdout


def test_without_home_the_cache_is_under_the_password_databases_home(run, example):
    env = {k: v for k, v in run.env.items() if k != "HOME"}
    result = subprocess.run([CLI, "cache", "dir", "--tree", example], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "particles" / "kernels")


def test_tilde_in_pyproject_is_home_and_in_the_variable_literal_every_path_normalized(run, example, tmp_path):
    pyproject = example.parent / "pyproject.toml"
    relative_tree = os.path.relpath(example, tmp_path / "work")
    (tmp_path / "work").mkdir()
    result = run("cache", "dir", "--tree", relative_tree, cwd=tmp_path / "work",
                 env={"PARTICLES_KERNEL_CACHE": "~/kc"}, check=0)
    assert result.stdout.strip() == str(tmp_path / "work" / "~" / "kc")  # as cunumpy reads it
    pyproject.write_text(pyproject.read_text() + 'cache-dir = "~/kc/"\n')
    result = run("cache", "dir", "--tree", relative_tree, cwd=tmp_path / "work", check=0)
    assert result.stdout.strip() == str(run.home / "kc")
    assert not (example.parent / "~").exists()


def test_an_interrupted_nvcc_build_leaves_0_temporary_folders_and_0_tmpxft_files(run, example, tmp_path):
    tmp = run.home / "tmp"
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp / f"cunumpy-kernels-nvcc.{process_scope()}.{dead.pid}.0.1"
    (stale / "tmp").mkdir(parents=True)
    (stale / "tmp" / "tmpxft_00000001.cpp").write_text("left by a killed build")
    process = subprocess.Popen([CLI, "build", "--only", "cuda", "--compiler", "nvcc", "--cache-dir", tmp_path / "cache",
                                example], env=run.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    # Interrupt once nvcc writes its intermediate files, which must be inside the tool's folder.
    while time.monotonic() < deadline and not [
        path for path in tmp.glob("cunumpy-kernels-nvcc.*/tmp/tmpxft_*") if path.parent.parent != stale
    ]:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    assert not stale.exists()
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=120)
    assert process.returncode == -signal.SIGINT
    assert list(tmp.glob("cunumpy-kernels-nvcc.*")) == []
    assert list(tmp.rglob("tmpxft_*")) == []


def one_kernel_tree(root, package, kernel):
    """src/<package>/kernels/<kernel>/ with a host and a CUDA version."""
    folder = root / "src" / package / "kernels" / kernel
    folder.mkdir(parents=True)
    for init in (root / "src" / package, root / "src" / package / "kernels"):
        (init / "__init__.py").write_text("")
    (folder / f"{kernel}_kernels.py").write_text(f"def {kernel}(x: 'float[:]', n: int):\n    pass\n")
    (folder / f"{kernel}_cuda.cu").write_text(
        f'extern "C" __global__ void {kernel}(double* x, long long n) {{ if (threadIdx.x < n) x[threadIdx.x] = 1; }}\n')
    return root / "src"


def test_cache_path_prints_the_current_artifact_and_exits_1_when_stale_or_missing(run, example, tmp_path):
    cache = tmp_path / "cache"
    report, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    expected = {j["target"]: j["artifacts"][0] for j in report["jobs"] if j["kernel"] == "push"}
    listed = run("cache", "path", "push", "--tree", example, "--cache-dir", cache, check=0).stdout.split()
    assert sorted(listed) == sorted(expected.values())
    for target in ("sm_90", "compute_90"):
        assert run("cache", "path", "particles.kernels.push", "--arch", target, "--tree", example,
                   "--cache-dir", cache, check=0).stdout.strip() == expected[target]
    source = example / "particles" / "kernels" / "push" / "push_cuda.cu"
    source.write_text(source.read_text() + "\n// edited\n")
    result = run("cache", "path", "push", "--arch", "sm_90", "--tree", example, "--cache-dir", cache, check=1)
    assert result.stdout == "" and "push_cuda.cu changed" in result.stderr
    assert run("cache", "path", "nosuch", "--tree", example, "--cache-dir", cache, check=2).stderr.count("no CUDA kernel 'nosuch'") == 1


def test_cache_clean_of_one_tree_removes_its_2_entries_and_keeps_the_others_2(run, tmp_path):
    cache = tmp_path / "cache"
    alpha = one_kernel_tree(tmp_path / "alpha", "alpha", "push")
    beta = one_kernel_tree(tmp_path / "beta", "beta", "scale")
    for tree in (alpha, beta):
        run("build", "--only", "cuda", "--arch", "sm_90", "--cache-dir", cache, tree, check=0)
    assert json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)["entries"] == 4
    listed = run("cache", "clean", "-n", "--tree", alpha, "--cache-dir", cache, check=0).stdout
    assert listed.count("would remove ") == 3 and "would remove 2 entries" in listed
    assert json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)["entries"] == 4
    result = run("cache", "clean", "--tree", alpha, "--cache-dir", cache, check=0)
    assert result.stdout.startswith("removed 2 entries")
    left = json.loads(run("cache", "list", "--json", "--cache-dir", cache, check=0).stdout)
    assert {e["module"] for e in left} == {"beta.kernels.scale"} and len(left) == 2
    assert not list((cache / "cuda-last").glob("alpha.*"))
    # The other tree still builds warm; the cleaned one builds again.
    assert "2 cached" in run("build", "--only", "cuda", "--arch", "sm_90", "--cache-dir", cache, beta, check=0).stdout
    assert "2 built" in run("build", "--only", "cuda", "--arch", "sm_90", "--cache-dir", cache, alpha, check=0).stdout
    result = run("cache", "clean", "--cache-dir", cache, check=0)
    assert result.stdout.startswith("removed 4 entries")
    assert json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)["entries"] == 0
    assert not list((cache / "cuda-last").iterdir())
    assert (cache / "CACHEDIR.TAG").exists()


def test_info_counts_2_misses_then_2_hits_and_zero_resets_them_to_0(run, tmp_path):
    cache = tmp_path / "cache"
    tree = one_kernel_tree(tmp_path / "alpha", "alpha", "push")
    args = ["build", "--only", "cuda", "--arch", "sm_90", "--cache-dir", cache, tree]
    run(*args, check=0)  # sm_90 and compute_90: 2 compiles
    run(*args, check=0)  # 2 hits
    info = json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)["statistics"]
    assert (info["build_hits"], info["build_misses"], info["since"]) == (2, 2, "")
    text = run("cache", "info", "--cache-dir", cache, check=0).stdout
    assert "hits:       2 (50.0 % hit rate; build 2, runtime loads 0)" in text
    assert len(list((cache / ".stats").glob("*.json"))) == 1  # folded into total.json
    assert "zeroed" in run("cache", "info", "--zero", "--cache-dir", cache, check=0).stdout
    run(*args, check=0)
    info = json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)["statistics"]
    assert (info["build_hits"], info["build_misses"]) == (2, 0) and info["since"]


def test_a_group_cache_keeps_its_group_and_a_cache_every_user_can_write_is_refused(run, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    group = 1 if os.geteuid() == 0 else os.getgid()  # root may hand the root to another group
    os.chown(cache, -1, group)
    os.chmod(cache, 0o2775)
    tree = one_kernel_tree(tmp_path / "alpha", "alpha", "push")
    pyproject = tmp_path / "alpha" / "pyproject.toml"
    pyproject.write_text(f'[tool.cunumpy-kernels]\ncache-dir = "{cache}"\numask = "002"\narch = ["sm_90"]\n')
    report, _ = run.json("build", "--only", "cuda", tree, cwd=tmp_path / "alpha", check=0)
    assert {j["state"] for j in report["jobs"]} == {"built"}
    paths = [p for p in cache.rglob("*") if not p.is_symlink()]
    assert paths and all(p.stat().st_gid == group for p in paths)
    folders = [p for p in paths if p.is_dir()]
    assert all(p.stat().st_mode & 0o7777 == 0o2775 for p in folders), [oct(p.stat().st_mode) for p in folders]

    entry = Path(report["jobs"][0]["entry"])
    os.chmod(entry, 0o2777)
    report, result = run.json("build", "--only", "cuda", tree, cwd=tmp_path / "alpha")
    assert result.returncode == 1
    refused = [j for j in report["jobs"] if j["state"] == "failed"]
    assert len(refused) == 1 and f"chmod o-w {entry}" in refused[0]["log"]
    os.chmod(entry, 0o2775)
    os.chmod(cache, 0o2777)
    result = run("build", "--only", "cuda", tree, cwd=tmp_path / "alpha", check=1)
    assert f"{cache} can be written by every user (mode 2777)" in result.stderr


def entry_of(cache, kernel, target):
    for manifest in (cache / "cuda").glob("*/*/manifest.json"):
        data = json.loads(manifest.read_text())
        if data["kernel"] == kernel and data["target"] == target:
            return manifest.parent, data
    raise AssertionError(f"no {kernel} {target} entry in {cache}")


def make_push_entry_claim_deposit(cache, field):
    """Edits push's sm_90 entry so that a field beside its keyed inputs says
    another kernel or target; its checksums are made to match again."""
    push_dir, push = entry_of(cache, "push", "sm_90")
    if field == "artifact":  # deposit's cubin, under push's file name, with deposit's entry symbol
        deposit_dir, deposit = entry_of(cache, "deposit", "sm_90")
        cubin = (deposit_dir / deposit["artifacts"][0]["file"]).read_bytes()
        (push_dir / push["artifacts"][0]["file"]).write_bytes(cubin)
        push["artifacts"][0].update(size=len(cubin), sha256=hashlib.sha256(cubin).hexdigest())
        push["entry_symbol"] = deposit["entry_symbol"]
    elif field == "kernel":
        push["kernel"] = "deposit"
    else:
        push["target"] = push["artifacts"][0]["target"] = "sm_80"
    (push_dir / "manifest.json").write_text(json.dumps(push))
    return {"artifact": "entry symbol deposit is not kernel push's",
            "kernel": "the manifest says kernel deposit, its key's inputs say push",
            "target": "the manifest says target sm_80, its key's inputs say sm_90"}[field]


@pytest.mark.parametrize("field", ["artifact", "kernel", "target"])
def test_an_entry_whose_manifest_contradicts_its_key_is_bad_for_verify_export_and_import(run, example, tmp_path, field):
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    problem = make_push_entry_claim_deposit(cache, field)
    result = run("cache", "verify", "--cache-dir", cache)
    assert result.returncode == 1 and "1 bad entry" in result.stdout and problem in result.stdout, result.stdout
    export = run("cache", "export", tmp_path / "k.tar", "--cache-dir", cache, check=0)
    assert "exported 5 entries" in export.stdout and problem in export.stderr, export.stderr
    archive = tmp_path / "forged.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(cache / "cuda", arcname="cuda")
    result = run("cache", "import", archive, "--cache-dir", tmp_path / "node")
    assert result.returncode == 1 and problem in result.stderr and "nothing was imported" in result.stderr, result.stderr


@pytest.mark.parametrize("swap", ["architecture", "entry"])
def test_import_refuses_an_altered_artifact_with_advice_for_an_archive(run, example, tmp_path, swap):
    # Another target's cubin, or another kernel's, under an entry's name, its
    # checksums made to match: the load checks refuse it, and the advice is an
    # importer's (export again, or build), not a compile's (options, --arch).
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    push_dir, push = entry_of(cache, "push", "sm_90")
    other_dir, other = entry_of(cache, "push", "sm_80") if swap == "architecture" else entry_of(cache, "deposit", "sm_90")
    cubin = (other_dir / other["artifacts"][0]["file"]).read_bytes()
    (push_dir / push["artifacts"][0]["file"]).write_bytes(cubin)
    push["artifacts"][0].update(size=len(cubin), sha256=hashlib.sha256(cubin).hexdigest())
    (push_dir / "manifest.json").write_text(json.dumps(push))
    archive = tmp_path / "altered.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(cache / "cuda", arcname="cuda")
    result = run("cache", "import", archive, "--cache-dir", tmp_path / "node")
    assert result.returncode == 1 and f"check '{swap}' failed" in result.stderr, result.stderr
    assert "nothing was imported" in result.stderr and "Export the entries again" in result.stderr
    assert "--arch" not in result.stderr and "compiler option" not in result.stderr
    verify = run("cache", "verify", "--cache-dir", cache)
    assert verify.returncode == 1 and f"check '{swap}' failed" in verify.stdout
    assert "--arch" not in verify.stdout + verify.stderr
