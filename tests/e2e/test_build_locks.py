"""Builders that share a cold cache compile each key once (issue: a thousand ranks).

Sixteen `build` processes started together, with nvcc counted through a
wrapper toolkit; a builder killed while it holds the locks; a lock left by a
node that went away; and sixteen runtime processes that miss the same key
(NVRTC, the project's stand-in driver).
"""

import json
import os
import queue
import signal
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import CLI

REAL_ROOT = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
APP = os.environ.get("CUNUMPY_KERNELS_PARTICLES_APP")
FAKE_LIBCUDA_DIR = os.environ.get("CUNUMPY_KERNELS_FAKE_LIBCUDA_DIR")
PROCESSES = 16


def counting_toolkit(tmp_path, holding_child=False):
    """A toolkit whose nvcc logs each start, sleeps while tmp_path/hold exists, then runs the real one.

    With `holding_child`, the sleeping is done by a child of nvcc, as cicc and
    ptxas run under the real one, whose pid goes to tmp_path/nvcc-children.
    A file, not a variable: compilers run in an environment the tool builds,
    which a test's variable does not reach."""
    root = tmp_path / "toolkit"
    (root / "bin").mkdir(parents=True)
    (root / "include").symlink_to(REAL_ROOT / "include")
    calls = tmp_path / "nvcc-calls"
    nvcc = root / "bin" / "nvcc"
    hold_loop = f'while [ -e {tmp_path / "hold"} ]; do sleep 0.1; done'
    if holding_child:
        hold_loop = f'( {hold_loop} ) & echo $! >> {tmp_path / "nvcc-children"}; wait $!'
    nvcc.write_text(
        "#!/bin/sh\n"
        f'echo "$$ $@" >> {calls}\n'
        # Identity probes (--version) never wait: only compiles are held.
        'case " $* " in *" --version "*) ;; *)\n'
        f'  {hold_loop} ;;\n'
        'esac\n'
        f'exec {REAL_ROOT}/bin/nvcc "$@"\n'
    )
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IEXEC)
    return root, calls


def cold_cache(run, example, tmp_path, holding_child=False):
    """A counting toolkit and an empty cache; each builder probes the compiler's identity itself (a dry run
    records nothing), and compiles() leaves those probes out."""
    toolkit, calls = counting_toolkit(tmp_path, holding_child)
    calls.write_text("")
    return toolkit, calls, tmp_path / "cache"


def compiles(calls):
    return [line for line in calls.read_text().splitlines() if "--version" not in line]


def build_args(toolkit, cache, example):
    # Two targets a kernel: the kernel's locks are taken together, in key order.
    return ["build", "--only", "cuda", "--compiler", "nvcc", "--cuda-root", toolkit, "--arch", "sm_90",
            "--cache-dir", cache, "--json", example]


def start(run, args, env=None):
    return subprocess.Popen([CLI, *map(str, args)], env=dict(run.env, **(env or {})), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def finish(process, timeout=600):
    stdout, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, f"exit {process.returncode}\n{stdout}\n{stderr}"
    return json.loads(stdout), stderr


def entries(cache):
    return sorted(p for p in (cache / "cuda").glob("*/*") if not p.name.endswith(".lock") and ".lock." not in p.name)


def lock_files(cache):
    return sorted(str(p) for p in cache.rglob("*.lock*"))


def test_sixteen_builders_on_a_cold_cache_compile_each_key_once(run, example, tmp_path):
    toolkit, calls, cache = cold_cache(run, example, tmp_path)
    processes = [start(run, build_args(toolkit, cache, example)) for _ in range(PROCESSES)]
    reports = [finish(p)[0] for p in processes]

    keys = {job["key"] for job in reports[0]["jobs"]}
    assert len(keys) == 4  # 2 kernels x (sm_90 cubin, compute_90 PTX)
    # One nvcc run a kernel makes both its targets (-fatbin, a -gencode each).
    assert len(compiles(calls)) == 2, "\n".join(compiles(calls))
    assert all(line.count("-gencode") == 2 for line in compiles(calls)), "\n".join(compiles(calls))
    built = [job["key"] for report in reports for job in report["jobs"] if job["state"] == "built"]
    assert sorted(built) == sorted(keys), "each key built by exactly one process"
    for report in reports:
        assert {job["key"] for job in report["jobs"]} == keys
        assert all(job["state"] in ("built", "hit") for job in report["jobs"]), report["jobs"]
    assert [p.name for p in entries(cache)] == sorted(keys)
    assert lock_files(cache) == []
    # A waiter that found the key published while it waited says by whom: the builder that built it.
    builder_of = {job["key"]: f"{socket.gethostname()}:{process.pid}" for process, report in zip(processes, reports)
                  for job in report["jobs"] if job["state"] == "built"}
    waited = [job for report in reports for job in report["jobs"] if job.get("reason", "").startswith("published")]
    assert waited, "no builder waited for another"
    for job in waited:
        assert job["reason"] == f"published by {builder_of[job['key']]} while this one waited", job
    for entry in entries(cache):
        assert json.loads((entry / "manifest.json").read_text())["published_by"] == builder_of[entry.name]
    info, _ = run.json("cache", "info", "--cache-dir", cache, check=0)
    statistics = info["statistics"]
    assert (statistics["build_misses"], statistics["build_hits"]) == (len(keys), (PROCESSES - 1) * len(keys)), \
        "a waiter that used the published entry compiled nothing: a hit"


def test_a_killed_lock_holder_does_not_stop_the_others(run, example, tmp_path):
    toolkit, calls, cache = cold_cache(run, example, tmp_path)
    hold = tmp_path / "hold"
    hold.write_text("")
    holder = start(run, build_args(toolkit, cache, example), env={"HOLD_NVCC": str(hold)})
    deadline = time.monotonic() + 120
    while not compiles(calls):  # the holder has its locks and runs nvcc
        assert time.monotonic() < deadline and holder.poll() is None, f"holder exited {holder.poll()}"
        time.sleep(0.1)
    assert lock_files(cache)
    waiters = [start(run, build_args(toolkit, cache, example), env={"CUNUMPY_KERNELS_LOCK_TIMEOUT": "5"})
               for _ in range(3)]
    time.sleep(2)
    assert all(w.poll() is None for w in waiters), "the waiters did not wait for the holder"
    os.killpg(holder.pid, signal.SIGKILL)  # the builder and its nvcc, mid-compile
    holder.wait()
    hold.unlink()
    started = time.monotonic()
    results = [finish(w, timeout=300) for w in waiters]
    assert time.monotonic() - started < 120
    broke = [stderr for _, stderr in results if "broke the build lock" in stderr]
    assert broke and "its process is gone" in broke[0], [stderr for _, stderr in results]
    keys = {job["key"] for job in results[0][0]["jobs"]}
    built = [job["key"] for report, _ in results for job in report["jobs"] if job["state"] == "built"]
    assert sorted(built) == sorted(keys), "the waiters built each key once between them"
    assert [p.name for p in entries(cache)] == sorted(keys)
    assert lock_files(cache) == []


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_build_stopped_by_a_signal_leaves_no_lock(run, example, tmp_path, stop):
    toolkit, calls, cache = cold_cache(run, example, tmp_path)
    hold = tmp_path / "hold"
    hold.write_text("")
    builder = start(run, build_args(toolkit, cache, example), env={"HOLD_NVCC": str(hold)})
    deadline = time.monotonic() + 120
    while not compiles(calls):
        assert time.monotonic() < deadline and builder.poll() is None, f"builder exited {builder.poll()}"
        time.sleep(0.1)
    assert lock_files(cache)
    builder.send_signal(stop)  # as Ctrl-C, scancel or a time limit: to the tool, which stops its compilers
    _, stderr = builder.communicate(timeout=60)
    assert builder.returncode == -stop
    assert lock_files(cache) == [], "a builder on another node would wait the timeout out"
    # Its compilers died of the stop: no job "failed" with an empty reason.
    assert "failed" not in stderr, stderr


def wait_for_compiles(calls, count, *processes, seconds=120):
    deadline = time.monotonic() + seconds
    while len(compiles(calls)) < count:
        assert time.monotonic() < deadline, "\n".join(compiles(calls))
        assert all(p.poll() is None for p in processes), [p.poll() for p in processes]
        time.sleep(0.1)


def holders(cache):
    return {json.loads(Path(lock).read_text())["pid"] for lock in lock_files(cache)}


def test_a_paused_holder_stopped_later_leaves_the_lock_its_breaker_took(run, example, tmp_path):
    """Slurm's suspend then cancel: SIGSTOP, another builder breaks the lock and takes it, then SIGTERM."""
    toolkit, calls, cache = cold_cache(run, example, tmp_path)
    hold = tmp_path / "hold"
    hold.write_text("")
    args = [*build_args(toolkit, cache, example), "--jobs", "2"]  # both kernels' nvcc at once
    paused = start(run, args)
    wait_for_compiles(calls, 2, paused)
    os.kill(paused.pid, signal.SIGSTOP)
    assert holders(cache) == {paused.pid}
    breaker = start(run, args, env={"CUNUMPY_KERNELS_LOCK_TIMEOUT": "2"})
    wait_for_compiles(calls, 4, breaker)  # it broke the paused builder's locks and compiles
    assert holders(cache) == {breaker.pid}
    os.kill(paused.pid, signal.SIGTERM)
    os.kill(paused.pid, signal.SIGCONT)
    paused.communicate(timeout=60)
    assert paused.returncode == -signal.SIGTERM
    assert holders(cache) == {breaker.pid}, "the stopped builder's handler removed locks it no longer held"
    third = start(run, args)
    time.sleep(2)
    assert len(compiles(calls)) == 4 and third.poll() is None, "the third builder waits for the breaker"
    hold.unlink()
    report, stderr = finish(breaker)
    assert "broke the build lock" in stderr
    assert {job["state"] for job in report["jobs"]} == {"built"}
    report, _ = finish(third)
    assert {job["state"] for job in report["jobs"]} == {"hit"}
    assert len(compiles(calls)) == 4, "\n".join(compiles(calls))
    assert lock_files(cache) == []


def alive(pid):
    """Whether `pid` runs: a zombie waiting for its new parent to reap it does not."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("holding_child", [False, True], ids=["nvcc", "nvcc's child"])
def test_a_builder_killed_with_sigkill_takes_its_compiler_with_it(run, example, tmp_path, holding_child):
    toolkit, calls, cache = cold_cache(run, example, tmp_path, holding_child)
    hold = tmp_path / "hold"
    hold.write_text("")
    builder = start(run, [*build_args(toolkit, cache, example), "--jobs", "2"])
    wait_for_compiles(calls, 2, builder)
    compilers = [int(line.split()[0]) for line in compiles(calls)]
    if holding_child:
        children = tmp_path / "nvcc-children"
        deadline = time.monotonic() + 30
        while len(children.read_text().split() if children.exists() else []) < 2:
            assert time.monotonic() < deadline, "nvcc started no child"
            time.sleep(0.05)
        compilers += [int(pid) for pid in children.read_text().split()]
    assert all(alive(pid) for pid in compilers)
    os.kill(builder.pid, signal.SIGKILL)  # no handler runs: only the kernel can end the compilers
    builder.communicate(timeout=60)
    deadline = time.monotonic() + 2
    while any(alive(pid) for pid in compilers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in compilers), "a compiler outlived its builder"
    hold.unlink()


@pytest.mark.parametrize("json_report", [True, False])
def test_a_lock_break_is_printed_when_it_happens_off_a_terminal(run, example, tmp_path, json_report):
    toolkit, calls, cache = cold_cache(run, example, tmp_path)
    args = [arg for arg in build_args(toolkit, cache, example) if json_report or arg != "--json"]
    plan, _ = run.json(*build_args(toolkit, cache, example), "--dry-run", check=0)
    key = next(job["key"] for job in plan["jobs"] if job["kernel"] == "push")
    lock = cache / "cuda" / key[:2] / f"{key}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"host": "node-17.cluster", "pid": 4242, "started": "2026-12-01T00:00:00Z",
                                "token": "node-17"}))
    hold = tmp_path / "hold"
    hold.write_text("")
    builder = start(run, args, env={"CUNUMPY_KERNELS_LOCK_TIMEOUT": "1"})  # stderr is a pipe, not a terminal
    lines = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in builder.stderr], daemon=True)
    reader.start()
    seen = []
    deadline = time.monotonic() + 120
    while not any("broke the build lock" in line for line in seen):
        assert time.monotonic() < deadline, seen
        try:
            seen.append(lines.get(timeout=0.5))
        except queue.Empty:
            assert builder.poll() is None, seen
    assert builder.poll() is None, "printed only once the build ended"
    assert f"broke the build lock {lock} of node-17.cluster:4242" in "".join(seen)
    hold.unlink()
    builder.stdout.read()
    builder.wait(timeout=300)
    reader.join(timeout=60)
    while not lines.empty():
        seen.append(lines.get())
    assert builder.returncode == 0, seen
    assert sum("broke the build lock" in line for line in seen) == 1, "printed once, not again at the end"


def test_a_lock_left_by_another_node_is_broken_after_the_timeout(run, example, tmp_path):
    cache = tmp_path / "cache"
    args = ["build", "--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", cache, example]
    plan, _ = run.json(*args, "--dry-run", check=0)
    key = next(job["key"] for job in plan["jobs"] if job["kernel"] == "push")
    lock = cache / "cuda" / key[:2] / f"{key}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"host": "node-17.cluster", "pid": 4242, "started": "2026-12-01T00:00:00Z",
                                "token": "node-17"}))
    started = time.monotonic()
    result = run(*args, env={"CUNUMPY_KERNELS_LOCK_TIMEOUT": "1"}, check=0)
    assert time.monotonic() - started >= 1
    assert f"broke the build lock {lock} of node-17.cluster:4242 (since 2026-12-01T00:00:00Z): untouched for 1 s" \
        in result.stderr
    assert lock_files(cache) == []
    # Every lock of a node found gone is broken at once, not after a timeout each.
    plan, _ = run.json("build", "--only", "cuda", "--cache-dir", cache, example, "--dry-run", check=0)
    misses = {job["key"] for job in plan["jobs"] if job["state"] != "hit"}
    assert len(misses) == 4  # sm_80 and compute_90 of both kernels; sm_90 was built above
    for key in misses:
        lock = cache / "cuda" / key[:2] / f"{key}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text(json.dumps({"host": "node-17.cluster", "pid": 4242, "started": "2026-12-01T00:00:00Z",
                                    "token": key}))
    started = time.monotonic()
    result = run("build", "--only", "cuda", "--cache-dir", cache, "--jobs", "1", example,
                 env={"CUNUMPY_KERNELS_LOCK_TIMEOUT": "2"}, check=0)
    assert time.monotonic() - started < 2 * 2 + 60, "one timeout for the node, not one per lock"
    assert result.stderr.count("untouched for 2 s") == 1
    assert result.stderr.count("it was found gone at another lock") == len(misses) - 1
    assert lock_files(cache) == []
    bad = run(*args, env={"CUNUMPY_KERNELS_LOCK_TIMEOUT": "soon"})
    assert bad.returncode == 2
    assert "CUNUMPY_KERNELS_LOCK_TIMEOUT=soon" in bad.stderr


@pytest.mark.skipif(not (APP and FAKE_LIBCUDA_DIR), reason="run through meson (needs the example app and the fake driver)")
def test_sixteen_runtime_processes_that_miss_compile_once(run, example, tmp_path):
    from test_runtime_app import cunumpy_include_dir

    cache = tmp_path / "cache"
    env = dict(run.env, LD_LIBRARY_PATH=FAKE_LIBCUDA_DIR)
    command = [APP, "--src", example, "--cache-dir", cache, "--cunumpy-include-dir", cunumpy_include_dir(),
               "--markers", "64"]
    processes = [subprocess.Popen([str(part) for part in command], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(PROCESSES)]
    outputs = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=600)
        # The stand-in driver runs no kernel, so the app's parity check fails (exit 1); loading is what counts here.
        assert "gpu: Fake libcuda device" in stdout, f"{stdout}\n{stderr}"
        outputs.append(stdout)
    loads = [line.split()[:3] for out in outputs for line in out.splitlines() if " loaded " in line]
    assert len(loads) == 2 * PROCESSES, outputs[0]
    for kernel in ("push", "deposit"):
        how = sorted(entry[2] for entry in loads if entry[0] == kernel)
        assert how.count("nvrtc") == 1, f"{kernel}: {how}"
        assert how.count("cubin") == PROCESSES - 1, f"{kernel}: {how}"
    assert len(entries(cache)) == 2
    assert lock_files(cache) == []
