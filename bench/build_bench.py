"""Benchmarks of `cunumpy-kernels build` (issue 2), figures into bench/RESULTS.md.

    .venv/bin/python bench/build_bench.py [--cli build/tools/cunumpy-kernels] [--write]

- warm build (all hits) of a generated tree of 200 kernels sharing headers, wall time of the CLI;
- cold build of 20 kernels with --jobs 1 and --jobs 2, one target, fresh cache each run;
- NVRTC against nvcc for one small kernel, per compile.
Wall times of whole CLI processes: they include process start and the walk.
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernel_tree import make_kernel_tree  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


CPU_TIMES = []  # user + sys of each timed child, which load on the machine inflates far less than wall time


def timed(command, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_TIMES.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{result.stderr}")
    return elapsed, result


warm_cpu = []


def warm_build(cli, env, work):
    tree = make_kernel_tree(work / "warm", 200)
    cache = work / "warm-cache"
    base = [cli, "build", "--only", "cuda", "--jobs", "2", "--cache-dir", cache, tree]
    timed(base, env)  # cold, fills the cache
    CPU_TIMES.clear()
    times = [timed(base, env)[0] for _ in range(30)]
    warm_cpu[:] = CPU_TIMES[:]
    _, result = timed([*base, "--json"], env)
    report = json.loads(result.stdout)
    assert report["summary"]["hit"] == 600 and report["summary"]["built"] == 0
    return times


def cold_build(cli, env, work, jobs, runs=3):
    tree = make_kernel_tree(work / "cold", 20)
    times = []
    for run in range(runs):
        cache = work / f"cold-cache-{jobs}-{run}"
        elapsed, _ = timed([cli, "build", "--only", "cuda", "--jobs", str(jobs), "--arch", "sm_90", "--no-ptx",
                            "--cache-dir", cache, tree], env)
        times.append(elapsed)
    return times


def compiler_per_kernel(cli, env, work, compiler, runs=5):
    tree = make_kernel_tree(work / f"one-{compiler}", 1)
    times = []
    for run in range(runs):
        _, result = timed([cli, "build", "--only", "cuda", "--json", "--compiler", compiler, "--arch", "sm_90", "--no-ptx",
                           "--cache-dir", work / f"one-{compiler}-cache-{run}", tree], env)
        (job,) = json.loads(result.stdout)["jobs"]
        times.append(job["seconds"])
    return times


def fmt(times):
    return f"median {statistics.median(times) * 1000:.1f} ms (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}, n={len(times)})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=str(ROOT / "build" / "tools" / "cunumpy-kernels"))
    parser.add_argument("--write", action="store_true", help="replace the build section of bench/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = dict(os.environ, HOME=str(work / "home"), NO_COLOR="1")
        warm = warm_build(args.cli, env, work)
        cold1 = cold_build(args.cli, env, work, 1)
        cold2 = cold_build(args.cli, env, work, 2)
        nvrtc = compiler_per_kernel(args.cli, env, work, "nvrtc")
        nvcc = compiler_per_kernel(args.cli, env, work, "nvcc")
    speedup = statistics.median(cold1) / statistics.median(cold2)
    load = os.getloadavg()
    lines = [
        "## build (issue 2)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.node()} ({os.cpu_count()} cores, load average "
        f"{load[0]:.2f} at the end), `bench/build_bench.py`, wall time of whole CLI processes.",
        "",
        "| benchmark | target | result |",
        "|---|---|---|",
        f"| warm build, 200 kernels sharing headers, 600 hits | < 50 ms | {fmt(warm)} |",
        f"| same, CPU time (user + sys) of the process | | {fmt(warm_cpu)} |",
        f"| cold build, 20 kernels, sm_90, `--jobs 1` | | {fmt(cold1)} |",
        f"| cold build, 20 kernels, sm_90, `--jobs 2` | >= 1.7x faster than `--jobs 1` | {fmt(cold2)}: {speedup:.2f}x |",
        f"| one small kernel, NVRTC (in-process, job time) | | {fmt(nvrtc)} |",
        f"| one small kernel, nvcc (process, job time) | | {fmt(nvcc)} |",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write:
        results = ROOT / "bench" / "RESULTS.md"
        text = results.read_text() if results.exists() else "# Benchmark results\n\nFigures from runs of the scripts in bench/; each section says how it was measured.\n\n"
        start = text.find("## build (issue 2)")
        if start >= 0:
            end = text.find("\n## ", start + 1)
            text = text[:start] + section + (text[end + 1:] if end >= 0 else "")
        else:
            text += section
        results.write_text(text)


if __name__ == "__main__":
    main()
