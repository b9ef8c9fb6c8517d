"""Wall time of `check-signatures` and `status` over Struphy's published tree, beside `import cunumpy`.

Target (issue 3): each under 30 ms, so that a pre-commit hook feels instant.
Run on demand, not in the test suite:

    .venv/bin/python bench/signatures_status.py            # prints the figures
    .venv/bin/python bench/signatures_status.py --write    # and records them in bench/RESULTS.md

Struphy comes from `pip download --no-deps struphy` (or --struphy DIR, an
unpacked wheel). `status` is timed warm: after one `build` into a private
cache, so that it reads every entry and probe record as CI would.
"""

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- signatures-status:begin -->", "<!-- signatures-status:end -->"


def struphy_tree(work, given):
    if given:
        return Path(given)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(work), "struphy==3.5.0"],
                   check=True)
    wheel = next(work.glob("struphy-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(work / "tree")
    return work / "tree"


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command, runs, env=None, cwd=None, expect=(0,)):
    """Wall and CPU (user + sys) milliseconds of each run."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu = child_cpu()
        start = time.perf_counter()
        result = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((child_cpu() - cpu) * 1000)
        assert result.returncode in expect, f"{command}: exit {result.returncode}"
    return walls, cpus


def instructions(command, env):
    """Instructions executed (valgrind's callgrind): the same whatever else the machine does."""
    if not shutil.which("valgrind"):
        return None
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg", *command],
                                env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    return int(found.group(1)) if found else None


def row(label, figures, count=None):
    walls, cpus = figures
    millions = f"{count / 1e6:.0f}" if count else "-"
    return (f"| {label} | {min(walls):.1f} | {statistics.median(walls):.1f} | {max(walls):.1f} | "
            f"{statistics.median(cpus):.1f} | {millions} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=str(ROOT / "build" / "tools" / "cunumpy-kernels"))
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--struphy", help="an unpacked struphy wheel (default: pip download)")
    parser.add_argument("--cache", help="cache folder to build into and keep (default: a temporary one)")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--write", action="store_true", help="record the figures in bench/RESULTS.md")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        tree = struphy_tree(work, args.struphy)
        source = tree / "struphy"
        version = next((p.name for p in tree.glob("struphy-*.dist-info")), "struphy")
        env = dict(os.environ, HOME=str(work / "home"), NO_COLOR="1")
        cache = ["--cache-dir", args.cache or str(work / "cache"), "--python", args.python]
        built = subprocess.run([args.cli, "build", "--only", "cuda", "--jobs", str(os.cpu_count()), *cache, str(source)], env=env,
                               capture_output=True, text=True)
        summary = built.stdout.strip().splitlines()[-1] if built.stdout.strip() else built.stderr[-300:]
        load = os.getloadavg()[0]
        commands = {
            "check-signatures": [args.cli, "check-signatures", str(source)],
            "status (warm cache)": [args.cli, "status", *cache, str(source)],
            "status --json --check-signatures": [args.cli, "status", "--json", "--check-signatures", *cache,
                                                 str(source)],
            "build --dry-run (the planning status shares)": [args.cli, "build", "--dry-run", *cache, str(source)],
            "python -c 'import cunumpy'": [args.python, "-c", "import cunumpy"],
            "python -c 'pass'": [args.python, "-c", "pass"],
        }
        figures = {label: timed(command, args.runs, env) for label, command in commands.items()}
        counts = {label: instructions(command, env) for label, command in commands.items()
                  if command[0] == args.cli}
        kernels = subprocess.run([args.cli, "status", *cache, str(source)], env=env, capture_output=True,
                                 text=True).stdout.splitlines()[0]

    lines = [
        BEGIN,
        "## check-signatures and status over Struphy (issue 3)",
        "",
        f"`bench/signatures_status.py`, {args.runs} runs each, wall time in ms from the start of the process to",
        f"its exit (what a pre-commit hook waits for). {version}: {kernels}. Cache warmed by one",
        f"`build` ({summary}). Machine: {os.cpu_count()} cores, {platform.machine()}, load average {load:.1f} at the",
        f"start (other work shares the machine); CLI: `{Path(args.cli).relative_to(ROOT) if Path(args.cli).is_relative_to(ROOT) else args.cli}`"
        " (meson debugoptimized: -O2 -g). Target: under 30 ms each.",
        "",
        "Wall: min, median, max over the runs; CPU: median user + sys of the process; instructions: one run under",
        "callgrind, in millions (independent of the load).",
        "",
        "| command | wall min | wall median | wall max | CPU median | instructions (M) |",
        "|---|---|---|---|---|---|",
        *[row(label, figures[label], counts.get(label)) for label in figures],
        END,
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        results = ROOT / "bench" / "RESULTS.md"
        old = results.read_text() if results.exists() else "# Benchmark results\n"
        if BEGIN in old:
            new = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: text, old, flags=re.S)
        else:
            new = old.rstrip("\n") + "\n\n" + text + "\n"
        results.write_text(new)


if __name__ == "__main__":
    main()
