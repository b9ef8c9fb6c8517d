"""`cunumpy-kernels cache` on a cache built by `build`."""

import json
import tarfile
from pathlib import Path

from conftest import jobs_by_state


def test_info_list_verify_prune(run, example, tmp_path):
    cache = tmp_path / "cache"
    report, _ = run.json("build", "--cache-dir", cache, example, check=0)
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
    rebuilt, _ = run.json("build", "--cache-dir", cache, example, check=0)
    assert len(jobs_by_state(rebuilt, "built")) == 1

    assert "would remove 6 entries" in run("cache", "prune", "--max-size", "0", "-n", "--cache-dir", cache, check=0).stdout
    assert "removed 6 entries" in run("cache", "prune", "--max-size", "0", "--cache-dir", cache, check=0).stdout
    assert json.loads(run("cache", "info", "--json", "--cache-dir", cache, check=0).stdout)["entries"] == 0
    assert run("cache", "prune", "--cache-dir", cache).returncode == 2


def test_export_import_moves_a_warm_cache(run, example, tmp_path):
    run("build", "--cache-dir", tmp_path / "login", example, check=0)
    archive = tmp_path / "kernels.tar.zst"
    assert "exported 6 entries" in run("cache", "export", archive, "--cache-dir", tmp_path / "login", check=0).stdout
    assert "imported 6 entries" in run("cache", "import", archive, "--cache-dir", tmp_path / "node", check=0).stdout
    report, _ = run.json("build", "--cache-dir", tmp_path / "node", example, check=0)
    assert len(jobs_by_state(report, "hit")) == 6


def test_import_refuses_a_hostile_archive(run, tmp_path):
    evil = tmp_path / "evil.tar"
    payload = tmp_path / "payload"
    payload.write_text("x")
    with tarfile.open(evil, "w") as tar:
        tar.add(payload, arcname="../../outside")
    result = run("cache", "import", evil, "--cache-dir", tmp_path / "cache")
    assert result.returncode == 1 and "is not a cache file" in result.stderr
    assert not (tmp_path / "outside").exists()


def test_the_cache_of_a_tree_is_found_from_its_package(run, example):
    result = run("cache", "dir", "--tree", example, check=0)
    assert result.stdout.strip() == str(run.home / ".cache" / "particles" / "kernels")
    result = run("cache", "dir", "--tree", example, env={"PARTICLES_KERNEL_CACHE": "/somewhere"}, check=0)
    assert result.stdout.strip() == "/somewhere"
