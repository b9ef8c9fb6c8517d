"""`cunumpy-kernels build` on the example package, as a user runs it."""

import json
import os
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path

from conftest import PYTHON, jobs_by_state

KERNELS = ["particles.kernels.deposit", "particles.kernels.push", "particles.kernels.sort"]
TARGETS = {"sm_80", "sm_90", "compute_90"}


def test_cold_build_publishes_every_target_of_every_ported_kernel(run, example, tmp_path):
    cache = tmp_path / "cache"
    report, _ = run.json("build", "--only", "cuda", "--jobs", "2", "--cache-dir", cache, example)
    assert report["ok"]
    assert [k["module"] for k in report["kernels"]] == KERNELS
    sort = report["kernels"][2]
    assert sort["cuda"] is None and sort["host"][0]["kind"] == "pyccel"
    built = jobs_by_state(report, "built")
    assert len(built) == 6
    assert {(j["kernel"], j["target"]) for j in built} == {(k, t) for k in ("push", "deposit") for t in TARGETS}
    for job in built:
        assert re.fullmatch(r"[0-9a-f]{64}", job["key"])
        manifest = json.loads((Path(job["entry"]) / "manifest.json").read_text())
        assert manifest["key"] == job["key"]
        assert manifest["entry_symbol"] == job["kernel"]
        (artifact,) = job["artifacts"]
        data = Path(artifact).read_bytes()
        assert manifest["artifacts"][0]["size"] == len(data)
        assert data.startswith(b"\x7fELF") == job["target"].startswith("sm_")
        assert manifest["inputs"]["compiler"].startswith("nvrtc ")
    deposit = next(j for j in built if j["kernel"] == "deposit")
    headers = json.loads((Path(deposit["entry"]) / "manifest.json").read_text())["inputs"]["headers"]
    assert set(headers) == {"particles/kernels/common.cuh", "<cunumpy>/cunumpy/atomic.cuh"}
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_warm_build_compiles_nothing_and_loads_no_compiler(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    result = run("build", "--only", "cuda", "--cache-dir", cache, example, env={"LD_DEBUG": "files"}, check=0)
    assert "libnvrtc" not in result.stderr, "a warm build loaded NVRTC"
    assert "0 built, 6 cached, 0 failed" in result.stdout


def test_a_warm_build_counts_its_hits_refreshes_a_day_old_use_stamp_and_sees_a_same_size_edit(run, example, tmp_path):
    cache = tmp_path / "cache"
    args = ["build", "--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", cache, "--python", PYTHON, example]
    assert "2 built" in run(*args, check=0).stdout

    def hits():
        info, _ = run.json("cache", "info", "--cache-dir", cache)
        return info["statistics"]["build_hits"]

    before = hits()
    stamps = list(cache.glob("**/cuda-used/*"))
    assert len(stamps) == 2
    three_days_ago = time.time() - 3 * 24 * 3600
    for stamp in stamps:
        os.utime(stamp, (three_days_ago, three_days_ago))
    assert "0 built, 2 cached, 0 failed" in run(*args, check=0).stdout
    assert hits() == before + 2
    assert all(stamp.stat().st_mtime > time.time() - 60 for stamp in stamps)
    # Past the source record's racy margin, an edit that keeps the file's size and modification time.
    time.sleep(2.2)
    source = example / "particles/kernels/push/push_cuda.cu"
    kept = source.stat()
    source.write_text(source.read_text().replace("per marker", "per Marker", 1))
    os.utime(source, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    assert source.stat().st_size == kept.st_size
    assert "1 built" in run(*args, check=0).stdout


def test_warm_build_with_nvcc_starts_no_process(run, example, tmp_path):
    # A toolkit whose nvcc logs every start, then runs the real one.
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    fake_root = tmp_path / "toolkit"
    (fake_root / "bin").mkdir(parents=True)
    (fake_root / "include").symlink_to(real_root / "include")
    calls = tmp_path / "nvcc-calls"
    nvcc = fake_root / "bin" / "nvcc"
    nvcc.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {real_root}/bin/nvcc "$@"\n')
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IEXEC)
    args = ["build", "--only", "cuda", "--compiler", "nvcc", "--cuda-root", fake_root, "--arch", "sm_90", "--no-ptx",
            "--cache-dir", tmp_path / "cache", example]
    report, _ = run.json(*args, check=0)
    assert len(jobs_by_state(report, "built")) == 2
    assert report["jobs"][0]["log"] == "" or "error" not in report["jobs"][0]["log"]
    cold_calls = calls.read_text().splitlines()
    assert len(cold_calls) == 3  # --version once, then one compile per kernel
    report, _ = run.json(*args, check=0)
    assert len(jobs_by_state(report, "hit")) == 2
    assert calls.read_text().splitlines() == cold_calls, "a warm build started nvcc"


def test_relative_toolkit_and_interpreter_paths_are_taken_from_the_working_folder(run, example, tmp_path):
    # nvcc runs in a scratch folder: relative paths must not reach it as they were written.
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    (tmp_path / "tk" / "bin").mkdir(parents=True)
    (tmp_path / "tk" / "include").symlink_to(real_root / "include")
    for name, target in (("tk/bin/nvcc", real_root / "bin" / "nvcc"), ("py", PYTHON)):
        wrapper = tmp_path / name
        wrapper.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        wrapper.chmod(0o755)
    report, _ = run.json("build", "--only", "cuda", "--compiler", "nvcc", "--cuda-root", "tk", "--python", "./py",
                         "--arch", "sm_90", "--no-ptx", "--cache-dir", "cache", example, cwd=tmp_path, check=0)
    assert len(jobs_by_state(report, "built")) == 2


def test_dry_run_names_the_input_that_changed(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    common = example / "particles" / "kernels" / "common.cuh"
    common.write_text(common.read_text() + "\n// tweak\n")
    result = run("build", "--only", "cuda", "--dry-run", "--cache-dir", cache, example, check=0)
    assert "would build particles.kernels.push [sm_90]: header particles/kernels/common.cuh changed" in result.stdout
    assert "6 to build, 0 cached" in result.stdout
    result = run("build", "--only", "cuda", "--dry-run", "--cache-dir", cache, "--compiler-option=-DNDEBUG", example, check=0)
    assert "header particles/kernels/common.cuh changed" in result.stdout
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    result = run("build", "--only", "cuda", "--dry-run", "--cache-dir", cache, "--compiler-option=-DNDEBUG", example, check=0)
    assert "compiler option -DNDEBUG added" in result.stdout
    result = run("build", "--only", "cuda", "--dry-run", "--cache-dir", cache, "--arch", "sm_100", example, check=0)
    assert "would build particles.kernels.push [sm_100]: no entry" in result.stdout
    # A dry run compiles nothing.
    assert "6 cached" in run("build", "--only", "cuda", "--cache-dir", cache, example, check=0).stdout


def test_a_failing_kernel_fails_alone_and_keeps_earlier_entries(run, example, tmp_path):
    cache = tmp_path / "cache"
    first, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    push = example / "particles" / "kernels" / "push" / "push_cuda.cu"
    push.write_text(push.read_text().replace("v[i] = v[i] + dt * e[i];", "v[i] = v[i] + dt * not_declared;"))
    result = run("build", "--only", "cuda", "--cache-dir", cache, example)
    assert result.returncode == 1
    assert re.search(re.escape(str(push)) + r":\d+: error: identifier \"not_declared\" is undefined", result.stderr)
    assert "0 built, 3 cached, 3 failed" in result.stdout
    for job in first["jobs"]:  # every earlier entry is intact
        for artifact in job["artifacts"]:
            assert Path(artifact).is_file()
    report, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example)
    assert {j["state"] for j in report["jobs"] if j["kernel"] == "push"} == {"failed"}
    assert {j["state"] for j in report["jobs"] if j["kernel"] == "deposit"} == {"hit"}
    assert not list((cache / ".cunumpy-kernels-tmp").iterdir())


def test_off_a_terminal_one_line_per_finished_job(run, example, tmp_path):
    result = run("build", "--only", "cuda", "--jobs", "1", "--cache-dir", tmp_path / "cache", example, check=0)
    lines = [l for l in result.stderr.splitlines() if l.startswith("built")]
    assert len(lines) == 6
    assert "\r" not in result.stderr and "\x1b[" not in result.stderr
    quiet = run("-q", "build", "--only", "cuda", "--cache-dir", tmp_path / "cache2", example, check=0)
    assert quiet.stderr == "" and quiet.stdout == ""


def test_on_a_terminal_a_progress_line(run, example, tmp_path):
    assert shutil.which("script"), "util-linux's script is missing: scripts/setup installs it"
    command = f"{run_cli()} -v build --only cuda --jobs 1 --cache-dir {tmp_path / 'cache'} {example}"
    env = dict(run.env)
    env.pop("NO_COLOR")
    result = subprocess.run(["script", "-qec", command, "/dev/null"], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    assert re.search(r"[\r\n]\x1b\[K\[\d+/6\] particles\.kernels\.\w+ \[\w+\] \(\d+\.\d s\)", result.stdout)
    assert "\x1b[32m" in result.stdout  # coloured on a terminal
    env["NO_COLOR"] = "1"
    result = subprocess.run(["script", "-qec", command, "/dev/null"], env=env, capture_output=True, text=True)
    assert "\x1b[32m" not in result.stdout


def run_cli():
    from conftest import CLI

    return CLI


def test_cache_root_follows_cunumpy(run, example, tmp_path):
    report, _ = run.json("build", "--only", "cuda", example, check=0)
    default_root = run.home / ".cache" / "particles" / "kernels"
    assert all(Path(j["entry"]).is_relative_to(default_root) for j in report["jobs"])
    moved = tmp_path / "moved"
    report, _ = run.json("build", "--only", "cuda", example, env={"PARTICLES_KERNEL_CACHE": str(moved)}, check=0)
    assert all(Path(j["entry"]).is_relative_to(moved) for j in report["jobs"])
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    report, result = run.json("build", "--only", "cuda", example, env={"PARTICLES_KERNEL_CACHE": str(blocked / "k")}, check=0)
    fallback = run.home / "tmp" / "particles-kernels"
    assert all(Path(j["entry"]).is_relative_to(fallback) for j in report["jobs"])
    assert "is not writable; using" in result.stderr


def test_status_reads_the_fallback_root_a_build_writes_when_the_preferred_cannot_be_written(run, example, tmp_path):
    """As cunumpy's PyccelCache, a build that cannot write the preferred root writes <tmp>/<name>-kernels;
    status and a dry run look there too (creating nothing), or they would never see those builds."""
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    env = {"PARTICLES_KERNEL_CACHE": str(blocked / "k")}
    fallback = run.home / "tmp" / "particles-kernels"

    def states():
        report, result = run.json("status", "--only", "cuda", example, env=env, check=0)
        assert "is not writable; using " + str(fallback) in result.stderr
        return {a["state"] for k in report["kernels"] for a in k["artifacts"]}

    assert states() <= {"missing", "unknown"}
    dry, _ = run.json("build", "--dry-run", "--only", "cuda", example, env=env, check=0)
    assert dry["jobs"] and all(j["state"] == "would-build" for j in dry["jobs"])
    # A dry run publishes nothing (it may remember tool answers in .probes/, as it does in any root).
    assert not (fallback / "cuda").exists()
    run("build", "--only", "cuda", example, env=env, check=0)
    assert states() == {"built"}
    dry, _ = run.json("build", "--dry-run", "--only", "cuda", example, env=env, check=0)
    assert all(j["state"] == "hit" for j in dry["jobs"])


def test_a_second_checkout_hits_the_same_entries(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    second = tmp_path / "second-checkout"
    shutil.copytree(example.parent, second)
    report, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, second / "src", check=0)
    assert len(jobs_by_state(report, "hit")) == 6


def test_config_comes_from_pyproject(run, example, tmp_path):
    pyproject = example.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('arch = ["sm_80", "sm_90"]', 'arch = ["sm_90"]\ncache-name = "pic"'))
    report, _ = run.json("build", "--only", "cuda", example, check=0)
    assert {j["target"] for j in report["jobs"]} == {"sm_90", "compute_90"}
    assert all(Path(j["entry"]).is_relative_to(run.home / ".cache" / "pic" / "kernels") for j in report["jobs"])


def test_usage_errors_exit_2_with_a_clear_message(run, example, tmp_path):
    result = run("build", "--only", "cuda", "--no-such-flag")
    assert result.returncode == 2
    result = run("build", "--only", "cuda", "--arch", "hopper", example)
    assert result.returncode == 2 and "'hopper' is not a CUDA architecture" in result.stderr
    result = run("build", "--only", "cuda", tmp_path / "missing")
    assert result.returncode == 2 and "missing: no such file or folder" in result.stderr
    result = run("build", "--only", "cuda", "--jobs", "0", example)
    assert result.returncode == 2
    pyproject = example.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "colour = true\n")
    result = run("build", "--only", "cuda", example)
    assert result.returncode == 2
    assert f"{pyproject}:" in result.stderr and "colour: unknown key" in result.stderr


def test_long_kernel_names_are_warned_about(run, tmp_path):
    name = "k" * 49
    folder = tmp_path / "tree" / "pkg" / "kernels" / name
    folder.mkdir(parents=True)
    (folder / f"{name}_kernels.py").write_text(f"def {name}(x: 'float[:]'):\n    pass\n")
    result = run("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tmp_path / "tree", check=0)
    assert f"kernel name '{name}' gives Pyccel's Fortran wrapper module 'bind_c_{name}_kernels' (64 characters)" \
        in result.stderr
    assert "shorten the name to at most 48 characters" in result.stderr
    result = run("build", "--only", "cuda", "--no-name-check", "--cache-dir", tmp_path / "cache", tmp_path / "tree", check=0)
    assert "characters" not in result.stderr


def test_missing_cunumpy_headers_are_named_with_the_fix(run, example, tmp_path):
    no_cunumpy = tmp_path / "python-without-cunumpy"
    no_cunumpy.write_text(f"#!/bin/sh\nexec {PYTHON} -I -S \"$@\"\n")
    no_cunumpy.chmod(0o755)
    result = run("build", "--only", "cuda", "--python", no_cunumpy, "--cache-dir", tmp_path / "cache", example)
    assert result.returncode == 1
    assert "includes cunumpy/atomic.cuh but cunumpy's CUDA headers were not found" in result.stderr
    assert "failed  particles.kernels.push" not in result.stderr  # push does not need cunumpy
    assert "failed  particles.kernels.deposit [sm_90]" in result.stderr


def test_a_damaged_entry_is_rebuilt_in_place(run, example, tmp_path):
    cache = tmp_path / "cache"
    first, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    victim = Path(first["jobs"][0]["artifacts"][0])
    victim.unlink()
    report, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    assert len(jobs_by_state(report, "built")) == 1
    assert victim.is_file()
    assert "0 bad entries" in run("cache", "verify", "--cache-dir", cache, check=0).stdout


def test_unreadable_sources_fail_alone(run, example, tmp_path):
    broken = example / "particles" / "kernels" / "common.cuh"
    broken.chmod(0)
    report, result = run.json("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", example, file_modes_bind=True)
    assert result.returncode == 1
    assert {j["state"] for j in report["jobs"] if j["kernel"] == "push"} == {"failed"}
    assert "cannot read" in report["jobs"][-1]["log"]


def test_a_named_toolkit_that_does_not_exist_is_an_error(run, example, tmp_path):
    result = run("build", "--only", "cuda", "--cuda-root", tmp_path / "no-toolkit", "--cache-dir", tmp_path / "cache", example)
    assert result.returncode == 1 and "which is not a folder" in result.stderr
    result = run("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", example, env={"CUDA_HOME": str(tmp_path)})
    assert result.returncode == 1 and "$CUDA_HOME names" in result.stderr


def test_a_symlinked_kernel_keeps_its_module_name(run, example, tmp_path):
    outside = tmp_path / "outside"
    (example / "particles" / "kernels" / "push").rename(outside)
    (example / "particles" / "kernels" / "push").symlink_to(outside)
    report, _ = run.json("build", "--only", "cuda", "--dry-run", "--cache-dir", tmp_path / "cache", example, check=0)
    assert "particles.kernels.push" in [k["module"] for k in report["kernels"]]


def test_a_read_only_cache_still_serves_its_hits(run, example, tmp_path):
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    cache.chmod(0o555)
    try:
        result = run("build", "--only", "cuda", "--cache-dir", cache, example, check=0, file_modes_bind=True)
        assert "6 cached" in result.stdout
    finally:
        cache.chmod(0o755)


def test_hits_in_an_unwritable_preferred_root_pass_the_write_check_too(run, example, tmp_path):
    """The fallback still reads the preferred root's entries (as cunumpy does): one that every
    user can write is refused there as in a writable root, never counted as a hit."""
    cache = tmp_path / "cache"
    env = {"PARTICLES_KERNEL_CACHE": str(cache)}
    run("build", "--only", "cuda", example, env=env, check=0)
    entries = [path for path in (cache / "cuda").glob("*/*") if path.is_dir()]
    assert len(entries) == 6
    for entry in entries:
        entry.chmod(0o777)
    cache.chmod(0o555)
    try:
        report, result = run.json("build", "--only", "cuda", example, env=env, file_modes_bind=True)
    finally:
        cache.chmod(0o755)
    assert "is not writable; using" in result.stderr
    assert not jobs_by_state(report, "hit"), result.stdout
    refused = jobs_by_state(report, "failed")
    assert len(refused) == 6 and all("can be written by every user" in job["log"] for job in refused), result.stdout


def test_a_manifest_every_user_can_write_refuses_its_entry(run, example, tmp_path):
    """The manifest names the artifact and its checksum: it is checked as the artifact is."""
    cache = tmp_path / "cache"
    run("build", "--only", "cuda", "--cache-dir", cache, example, check=0)
    manifest = sorted((cache / "cuda").glob("*/*/manifest.json"))[0]
    manifest.chmod(0o666)
    report, result = run.json("build", "--only", "cuda", "--cache-dir", cache, example)
    refused = jobs_by_state(report, "failed")
    assert len(refused) == 1 and f"{manifest} can be written by every user" in refused[0]["log"], result.stdout
    assert len(jobs_by_state(report, "hit")) == 5
    status, _ = run.json("status", "--only", "cuda", "--cache-dir", cache, example)
    assert sum(a["state"] == "failed" for k in status["kernels"] for a in k["artifacts"]) == 1


def test_nothing_to_build_and_unknown_commands_are_said(run, tmp_path):
    (tmp_path / "empty").mkdir()
    result = run("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tmp_path / "empty", check=0)
    assert "no kernels found" in result.stderr
    result = run("frobnicate")
    assert result.returncode == 2 and "unknown command 'frobnicate'" in result.stderr
    assert "Run 'cunumpy-kernels --help'" in result.stderr
    # A subcommand's unknown command is named with the commands it takes, and
    # the help pointed at is that command's, not the top level's.
    result = run("cache", "stats", "--cache-dir", tmp_path / "cache")
    assert result.returncode == 2
    assert "unknown cache command 'stats'; cache commands: dir info list verify prune export import path clean" in result.stderr
    assert "Run 'cunumpy-kernels cache --help'" in result.stderr
    result = run("cache")
    assert result.returncode == 2 and "Run 'cunumpy-kernels cache --help'" in result.stderr
    assert "no cache command given; cache commands: dir info list verify prune export import path clean" in result.stderr
    for line in [[], ["-q"], ["--color", "never"]]:
        result = run(*line)
        assert result.returncode == 2, line
        assert "no command given; commands: build cache bundle status check-signatures" in result.stderr, line
    assert run("--help").returncode == 0 and run("cache", "--help").returncode == 0


def test_global_options_stand_before_or_after_the_command(run, tmp_path):
    (tmp_path / "empty").mkdir()
    for line in [["-q", "status"], ["status", "-q"], ["cache", "info", "-q"], ["cache", "info", "--color", "never"],
                 ["status", "-v", "--color", "never"]]:
        words = [*line, "--cache-dir", tmp_path / "cache"] + ([tmp_path / "empty"] if "status" in line else [])
        result = run(*words)
        assert "not expected" not in result.stderr, (line, result.stderr)
        assert result.returncode in (0, 1), (line, result.stderr)
    result = run("status", "--color", "bogus", tmp_path / "empty")
    assert result.returncode == 2 and "bogus" in result.stderr
    result = run("cache", "verify", "--no-such-flag")
    assert result.returncode == 2 and "Run 'cunumpy-kernels cache verify --help'" in result.stderr
    # A check of a cache folder that does not exist (a mistyped --cache-dir) fails instead of passing.
    result = run("cache", "verify", "--cache-dir", tmp_path / "no-such-cache")
    assert result.returncode == 2 and "no cache at " + str(tmp_path / "no-such-cache") in result.stderr
    assert not (tmp_path / "no-such-cache").exists()
    result = run("cache", "export", "--cache-dir", tmp_path / "no-such-cache", tmp_path / "out.tar.zst")
    assert result.returncode == 2 and "no cache at" in result.stderr and not (tmp_path / "out.tar.zst").exists()
    result = run("cache", "info", "--cache-dir", tmp_path / "no-such-cache", check=0)
    assert "(does not exist: no build has written there)" in result.stdout


def test_sigterm_stops_the_compilers(run, tmp_path):
    import signal
    import time
    import subprocess
    sys_path = Path(__file__).resolve().parents[2] / "bench"
    import sys
    sys.path.insert(0, str(sys_path))
    from kernel_tree import make_kernel_tree
    from conftest import CLI
    tree = make_kernel_tree(tmp_path / "tree", 4, work=400)
    builder = subprocess.Popen([CLI, "build", "--only", "cuda", "--compiler", "nvcc", "--jobs", "2", "--cache-dir", str(tmp_path / "cache"),
                                str(tree)], env=run.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    def compilers():
        out = subprocess.run(["pgrep", "-f", str(tmp_path / "home" / "tmp")], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]
    while time.time() < deadline and not compilers():
        time.sleep(0.05)
    assert compilers(), "nvcc never started"
    builder.send_signal(signal.SIGTERM)
    builder.wait(timeout=60)
    assert builder.returncode == -signal.SIGTERM
    time.sleep(1)
    assert compilers() == [], "compilers outlived the build"
    # The compilers killed did not fail: status must not say "failed last time".
    failed = tmp_path / "cache" / "cuda-failed"
    assert not failed.exists() or list(failed.iterdir()) == []
