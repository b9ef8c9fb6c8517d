"""`cunumpy-kernels status` on the example package: porting line, rows, cache states and CI gates."""

import os
import subprocess
import sys

from conftest import SOURCE_ROOT

VENV_PYTHON = SOURCE_ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable)


def cunumpy_summary(src):
    result = subprocess.run([PYTHON, "-c", "from particles.kernels import catalog; print(catalog.summary())"],
                            cwd=src, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(src)),
                            timeout=120)
    return result.stdout.strip() if result.returncode == 0 else None


def rows(stdout):
    lines = stdout.splitlines()
    assert lines[1] == ""
    assert lines[2].split() == ["kernel", "host", "CUDA", "signatures", "artifacts"]
    return {line.split()[0]: line for line in lines[3:]}


def test_fresh_tree_status_matches_cunumpys_summary_and_needs_no_tool(run, example, tmp_path):
    result = run("status", "--cache-dir", tmp_path / "cache", example, env={"LD_DEBUG": "files"}, check=0)
    first = result.stdout.splitlines()[0]
    assert first == "CUDA kernels: 2 of 3 (missing: sort)"
    expected = cunumpy_summary(example)
    if expected is not None:
        assert first == expected
    table = rows(result.stdout)
    assert table["particles.kernels.sort"].split()[1:] == ["pyccel", "no", "-", "-"]
    assert "unknown (no record of the nvrtc version" in table["particles.kernels.push"]
    # no compiler library loaded, no process started
    assert "libnvrtc" not in result.stderr
    assert result.stderr.count("initialize program:") == 1


def test_states_follow_the_cache_and_the_gates_fail_as_documented(run, example, tmp_path):
    cache = tmp_path / "cache"
    common = ["--cache-dir", cache, "--python", PYTHON, example]
    run("build", "--arch", "sm_90", "--no-ptx", *common, check=0)
    flags = ["--arch", "sm_90", "--no-ptx", *common]

    result = run("status", *flags, "--require-built", "--check-signatures", env={"LD_DEBUG": "files"}, check=0)
    assert "libnvrtc" not in result.stderr and result.stderr.count("initialize program:") == 1
    table = rows(result.stdout)
    assert table["particles.kernels.push"].split()[1:] == ["pyccel", "yes", "match", "built:", "sm_90"]

    # the configuration counts: sm_80 was never built
    result = run("status", "--arch", "sm_80", "--no-ptx", *common, "--require-built", check=1)
    assert "missing: sm_80" in rows(result.stdout)["particles.kernels.deposit"]
    assert "--require-built: 2 artifacts are not built" in result.stderr

    result = run("status", *flags, "--require-cuda", check=1)
    assert "--require-cuda: 1 kernel has no CUDA version: particles.kernels.sort" in result.stderr

    header = example / "particles/kernels/common.cuh"
    header.write_text(header.read_text() + "\n// touched\n")
    result = run("status", *flags, "--require-built", check=1)
    assert "stale (header particles/kernels/common.cuh changed): sm_90" in rows(result.stdout)["particles.kernels.push"]

    cuda = example / "particles/kernels/push/push_cuda.cu"
    cuda.write_text(cuda.read_text().replace("double dt, double length", "double length, double dt"))
    report, result = run.json("status", *flags, "--check-signatures")
    assert result.returncode == 1
    assert report["ok"] is False
    push = next(k for k in report["kernels"] if k["name"] == "push")
    assert push["signatures"] == "mismatch"
    assert push["findings"] == ["kernel 'push': the host kernel takes (x, v, e, dt, length, n), "
                                "the CUDA kernel (x, v, e, length, dt, n)"]
    assert push["artifacts"] == [{"kind": "cuda", "target": "sm_90", "state": "stale",
                                  "reason": "source push_cuda.cu changed", "key": push["artifacts"][0]["key"]}]
    assert report["failed_gates"][0].startswith("--check-signatures: 1 kernel takes different parameters")


def test_a_failed_build_shows_as_failed_last_time(run, example, tmp_path):
    cache = tmp_path / "cache"
    cuda = example / "particles/kernels/deposit/deposit_cuda.cu"
    cuda.write_text(cuda.read_text().replace("double frac =", "double frac = undeclared_name +"))
    common = ["--arch", "sm_90", "--no-ptx", "--cache-dir", cache, "--python", PYTHON, example]
    run("build", *common, check=1)
    report, result = run.json("status", *common)
    assert result.returncode == 0
    deposit = next(k for k in report["kernels"] if k["name"] == "deposit")
    (artifact,) = deposit["artifacts"]
    assert artifact["state"] == "failed"
    assert artifact["reason"].startswith("failed last time: ")
    assert "deposit_cuda.cu" in artifact["reason"]
