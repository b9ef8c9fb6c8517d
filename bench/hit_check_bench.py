"""Warm-build cost of confirming a hit by opening the manifest (issue 45), figures into bench/RESULTS.md.

    .venv/bin/python bench/hit_check_bench.py BEFORE_CLI AFTER_CLI [--kernels 200] [--pairs 30]

A generated tree of N kernels (bench/kernel_tree.py) is built once, CUDA only, one
target; then warm builds (all hits) run in pairs, BEFORE and AFTER in alternating
order, so that load from other processes falls on both alike. Reports the median
wall and CPU (user + sys) time of each and the median of the paired ratios.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernel_tree import make_kernel_tree  # noqa: E402


def timed(command, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--kernels", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        src = make_kernel_tree(root / "tree", args.kernels, work=1)
        env = dict(os.environ, HOME=str(root / "home"))
        flags = ["build", "--only", "cuda", "--arch", "sm_90", "--no-ptx", "--cache-dir", str(root / "cache"), str(src)]
        subprocess.run([args.after, *flags], env=env, check=True, stdout=subprocess.DEVNULL)
        runs = {"before": [], "after": []}
        for pair in range(args.pairs + 2):  # the first two pairs warm the page cache, not counted
            order = ["before", "after"] if pair % 2 == 0 else ["after", "before"]
            for name in order:
                result = timed([getattr(args, name), *flags], env)
                if pair >= 2:
                    runs[name].append(result)
    for name in ("before", "after"):
        walls = [wall for wall, _ in runs[name]]
        cpus = [cpu for _, cpu in runs[name]]
        print(f"{name}: wall median {statistics.median(walls) * 1000:.1f} ms, CPU median {statistics.median(cpus) * 1000:.1f} ms")
    wall_ratio = statistics.median(a[0] / b[0] for a, b in zip(runs["after"], runs["before"]))
    cpu_ratio = statistics.median(a[1] / b[1] for a, b in zip(runs["after"], runs["before"]))
    print(f"after/before, median of {args.pairs} pairs: wall {wall_ratio:.3f}, CPU {cpu_ratio:.3f}")


if __name__ == "__main__":
    main()
