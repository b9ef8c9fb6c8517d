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
    table = lines[3:lines.index("", 3)] if "" in lines[3:] else lines[3:]
    return {line.split()[0]: line for line in table}


def footnotes(stdout):
    """The numbered notes under the table: {"[1]": "reason", ...}."""
    return dict(line.split(" ", 1) for line in stdout.splitlines() if line.startswith("["))


def test_fresh_tree_status_matches_cunumpys_summary_and_needs_no_tool(run, example, tmp_path):
    result = run("status", "--cache-dir", tmp_path / "cache", example, env={"LD_DEBUG": "files"}, check=0)
    first = result.stdout.splitlines()[0]
    assert first == "CUDA kernels: 2 of 3 (missing: sort)"
    expected = cunumpy_summary(example)
    if expected is not None:
        assert first == expected
    table = rows(result.stdout)
    # Host builds are artifacts too (issue 4): without a probe record of the
    # interpreter their state is unknown, never guessed.
    assert table["particles.kernels.sort"].split()[1:4] == ["pyccel", "no", "-"]
    assert table["particles.kernels.sort"].split()[4] == "unknown"
    assert table["particles.kernels.sort"].endswith(": host")
    # The explanation is printed once, under the table, not on each row.
    notes = footnotes(result.stdout)
    nvrtc = [n for n, text in notes.items() if text.startswith("no record of the nvrtc version")]
    assert len(nvrtc) == 1 and result.stdout.count("no record of the nvrtc version") == 1, result.stdout
    assert f"unknown (see {nvrtc[0]}): compute_90, sm_80, sm_90" in table["particles.kernels.push"]
    assert f"unknown (see {nvrtc[0]})" in table["particles.kernels.deposit"]
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
    assert table["particles.kernels.push"].split()[1:] == ["pyccel", "yes", "match", "built:", "host,", "sm_90"]

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
    cuda = [a for a in push["artifacts"] if a["kind"] == "cuda"]
    assert cuda == [{"kind": "cuda", "target": "sm_90", "state": "stale",
                     "reason": "source push_cuda.cu changed", "key": cuda[0]["key"]}]
    assert [(a["target"], a["state"]) for a in push["artifacts"] if a["kind"] == "host"] == [("host", "built")]
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
    (artifact,) = [a for a in deposit["artifacts"] if a["kind"] == "cuda"]
    assert artifact["state"] == "failed"
    assert artifact["reason"].startswith("failed last time: ")
    assert "deposit_cuda.cu" in artifact["reason"]


def test_a_header_not_found_is_failed_with_the_whole_message_the_build_gives(run, example, tmp_path):
    # The message names the folders searched on the lines after its first:
    # status shows all of it, in the table's note and in --json, as build --dry-run does.
    (example / "particles/kernels/common.cuh").unlink()
    common = ["--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", tmp_path / "cache", "--python", PYTHON,
              example]
    # Before any build recorded the compiler, the keys are unknown but the missing header is known.
    report, _ = run.json("status", *common)
    for kernel in report["kernels"]:
        for artifact in kernel["artifacts"]:
            assert artifact["state"] == "failed" and "common.cuh\" not found" in artifact["reason"], artifact
    run("build", *common, check=1)  # records the compiler and cunumpy's folder, which the search names
    dry = run("build", "--dry-run", *common, check=1)
    report, result = run.json("status", *common)
    assert result.returncode == 0
    deposit = next(k for k in report["kernels"] if k["name"] == "deposit")
    (artifact,) = deposit["artifacts"]
    assert artifact["state"] == "failed"
    reason = artifact["reason"]
    assert '#include "particles/kernels/common.cuh" not found (' in reason and '); searched:\n' in reason
    searched = [line.strip() for line in reason.splitlines()[1:] if line.startswith("  ")]
    assert str(example) in searched and len(searched) >= 3
    assert reason in dry.stdout + dry.stderr
    text = run("status", *common).stdout
    note = text[text.index("[1] "):]
    assert note.startswith("[1] " + reason.splitlines()[0] + "\n")
    for folder in searched:
        assert "\n  " + folder + "\n" in note


def test_an_interpreter_this_user_cannot_reach_leaves_host_rows_unknown_and_cuda_rows_as_usual(run, example, tmp_path):
    hidden = tmp_path / "hidden"
    (hidden / "bin").mkdir(parents=True)
    (hidden / "bin" / "python").symlink_to(PYTHON)
    hidden.chmod(0)
    try:
        result = run("status", "--cache-dir", tmp_path / "cache", "--python", hidden / "bin" / "python", example,
                     check=0, file_modes_bind=True)
    finally:
        hidden.chmod(0o700)
    assert "internal error" not in result.stderr
    push = rows(result.stdout)["particles.kernels.push"]
    notes = footnotes(result.stdout)
    host_note = next(n for n, text in notes.items() if "interpreter not accessible" in text)
    assert push.endswith(f"unknown (see {host_note}): host"), push
    assert "Permission denied" in notes[host_note]
    assert "compute_90, sm_80, sm_90" in push


def test_only_host_or_only_cuda_reports_those_artifacts_as_build_only_builds_them(run, example, tmp_path):
    common = ["--cache-dir", tmp_path / "cache", example]
    cuda = rows(run("status", "--only", "cuda", *common, check=0).stdout)["particles.kernels.push"]
    assert cuda.endswith("compute_90, sm_80, sm_90") and "host" not in cuda.split("match", 1)[1]
    host = rows(run("status", "--only", "host", *common, check=0).stdout)["particles.kernels.push"]
    assert host.endswith(": host") and "sm_90" not in host
    assert rows(run("status", "--only", "host", *common, check=0).stdout)["particles.kernels.sort"].endswith(": host")


def test_the_signature_gate_fails_on_errors_not_on_warnings(run, tmp_path):
    folder = tmp_path / "src" / "gate" / "kernels" / "push"
    folder.mkdir(parents=True)
    for init in (tmp_path / "src" / "gate", folder.parent):
        (init / "__init__.py").write_text("")
    (folder / "push_kernels.py").write_text("def push(x, n):\n    pass\n")
    # The compiler and the tool read it; cunumpy 0.7.1 does not (launch bounds before the name): a warning.
    (folder / "push_cuda.cu").write_text(
        'extern "C" __global__ void __launch_bounds__(256) push(double* x, int n) {}\n')
    common = ["--cache-dir", tmp_path / "cache", tmp_path / "src"]
    checked = run("check-signatures", tmp_path / "src", check=0)
    assert "warning:" in checked.stdout
    run("status", "--check-signatures", *common, check=0)
    run("check-signatures", "--warnings-as-errors", tmp_path / "src", check=1)
    (folder / "push_cuda.cu").write_text('extern "C" __global__ void push(double* x, int m) {}\n')
    result = run("status", "--check-signatures", *common, check=1)
    assert "--check-signatures: 1 kernel" in result.stderr


def test_two_cache_roots_warn_kernel_by_kernel_as_a_plan_on_one_thread(run, tmp_path):
    """Each root's warnings come before its kernel's, whichever thread planned the kernel."""
    src = tmp_path / "src"
    env = {}
    for package in ("alpha", "beta"):
        kernel = src / package / "k" / package
        kernel.mkdir(parents=True)
        (src / package / "__init__.py").write_text("")
        (src / package / "k" / "__init__.py").write_text("")
        (kernel / f"{package}_kernels.py").write_text(f"def {package}(x: 'float[:]', n: int):\n    x[0] = 1.0\n")
        # A cunumpy header with no cunumpy to find it: a warning of this kernel (said once, for the first).
        (kernel / f"{package}_cuda.cu").write_text(
            f'#include "cunumpy/{package}.cuh"\nextern "C" __global__ void {package}(double* x, int n) {{ x[0] = 1.0; }}\n')
        env[f"{package.upper()}_KERNEL_CACHE"] = str(tmp_path / "cache" / package)
    common = ["--only", "cuda", "--python", tmp_path / "no-python", src]
    run("build", *common, env=env, check=None)
    for package in ("alpha", "beta"):
        (tmp_path / "cache" / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / "cache" / package).chmod(0o777)
    try:
        for _ in range(3):
            warnings = [line for line in run("status", *common, env=env, check=None).stderr.splitlines()
                        if "warning:" in line]
            said = [("root " if "can be written by every user" in line else "header ") +
                    ("alpha" if "alpha" in line else "beta")
                    for line in warnings if "can be written by every user" in line or "cunumpy's CUDA headers" in line]
            assert said == ["root alpha", "header alpha", "root beta"], warnings
    finally:
        for package in ("alpha", "beta"):
            (tmp_path / "cache" / package).chmod(0o755)
