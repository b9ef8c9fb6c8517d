"""Warm `build` and `status` over a kernel tree against the read-and-hash floor (issue 14).

    .venv/bin/python bench/warm_check.py --tree STRUPHY_TREE --cache WARM_CACHE
        [--cli build/tools/cunumpy-kernels] [--baseline OLD_CLI [--baseline-cache ITS_COPY]]
        [--floor build/bench/read-hash-floor] [--floor-files cold|baseline|current]
        [--python .venv/bin/python] [--runs 41] [--only host|cuda] [--build-only host|cuda]

Needs strace (the floor's file list) and the floor program (`meson configure build -Dbench=true`,
then `ninja -C build bench/read-hash-floor`).

The cache must already hold every entry of the tree (run `build` once). The floor is a process
that reads and SHA-256-hashes the files `status` opens below the tree and in cunumpy's header
folder (found with strace): the sources, headers and host modules a check must look at. A
status that keeps a record of digests opens only what changed, which would shrink the floor with
it, so the files are by default those a status opens with no record (`--floor-files cold`: the
current binary over the warm cache's entries without its record); `baseline` or `current` take
those the warm binary opens. Each command runs alternately with the others, `--runs` times; medians of whole-process wall time and
the peak resident set size (getrusage of the child) are printed as one Markdown table, with
`import cunumpy` for comparison. Run it on a quiet machine.

Two builds of the tool that both keep a source record drop each other's facts (a record keeps
facts for the build that wrote them), so alternating them over one cache measures neither warm:
give the baseline a copy of the cache (`cp -a`) with `--baseline-cache`.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def opened_files(command, roots):
    """Regular files `command` opens for reading below any of `roots`, in order, each once."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as trace:
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", trace.name, *command],
                       capture_output=True, check=False)
        files = []
        for line in trace.read().splitlines():
            match = re.search(r'openat\(AT_FDCWD, "([^"]+)", O_RDONLY[^)]*\) = \d+', line)
            if not match:
                continue
            path = Path(match.group(1))
            if path.is_file() and any(str(path).startswith(str(root)) for root in roots) and path not in files:
                files.append(path)
        return files


def run_once(command, env, allowed=(0, 1)):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execve(command[0], command, env)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in allowed:
        raise SystemExit(f"{' '.join(command)} exited {os.waitstatus_to_exitcode(status)}: not a warm run "
                         "(status may say stale with 1; build must find every entry)")
    return wall, usage.ru_maxrss / 1024  # MB


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--cli", default=str(ROOT / "build" / "tools" / "cunumpy-kernels"))
    parser.add_argument("--baseline", help="an older binary, measured the same way")
    parser.add_argument("--baseline-cache", help="the baseline's copy of --cache (default: --cache itself)")
    parser.add_argument("--floor", default=str(ROOT / "build" / "bench" / "read-hash-floor"))
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--only", choices=["host", "cuda"])
    parser.add_argument("--floor-files", choices=["cold", "baseline", "current"], default="cold",
                        help="whose opened files the floor reads (default: a status with no record)")
    parser.add_argument("--build-only", choices=["host", "cuda"],
                        help="--only for build alone: a tree with modules that fail to build has no warm build")
    args = parser.parse_args()

    only = ["--only", args.only] if args.only else []
    build_only = ["--only", args.build_only] if args.build_only else only
    env = dict(os.environ)

    def commands(cli, cache=args.cache):
        common = ["--cache-dir", cache, "--python", args.python]
        return {"build": [cli, "build", "--jobs", "2", *build_only, *common, args.tree],
                "status": [cli, "status", *only, *common, args.tree]}

    cunumpy = subprocess.run([args.python, "-c", "import cunumpy, os; print(os.path.dirname(cunumpy.__file__))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    whose = args.floor_files
    if whose == "baseline" and not args.baseline:
        raise SystemExit("--floor-files baseline needs --baseline")
    if args.baseline_cache and not args.baseline:
        raise SystemExit("--baseline-cache needs --baseline")
    roots = [Path(args.tree).resolve(), Path(cunumpy).resolve()]
    if whose == "cold":
        # The warm cache without its record: links to all but `.records`.
        with tempfile.TemporaryDirectory() as unrecorded:
            for entry in Path(args.cache).iterdir():
                if entry.name != ".records":
                    (Path(unrecorded) / entry.name).symlink_to(entry.resolve())
            files = opened_files(commands(args.cli, unrecorded)["status"], roots)
    elif whose == "baseline":
        files = opened_files(commands(args.baseline, args.baseline_cache or args.cache)["status"], roots)
    else:
        files = opened_files(commands(args.cli)["status"], roots)
    listing = Path(tempfile.mkstemp(suffix=".files")[1])
    listing.write_text("".join(f"{f}\n" for f in files))
    size = sum(f.stat().st_size for f in files)

    measured = {"floor: read and hash": [args.floor, str(listing)], "import cunumpy": [args.python, "-c", "import cunumpy"]}
    for name, command in commands(args.cli).items():
        measured[f"{name}, current"] = command
    if args.baseline:
        for name, command in commands(args.baseline, args.baseline_cache or args.cache).items():
            measured[f"{name}, baseline"] = command
    envs = {name: env for name in measured}
    # A build that exits 1 compiled (and failed) something: not a warm build.
    allowed = {name: (0,) if name.startswith("build") else (0, 1) for name in measured}
    for _ in range(2):  # warm the page cache and the tools' records (a build's first hits make use stamps)
        for name, command in measured.items():
            run_once(command, envs[name], allowed[name])
        time.sleep(2.2)  # past the racy margin: the next warm run keeps its digests
    print("load before:", os.getloadavg(), file=sys.stderr)
    times = {name: [] for name in measured}
    for _ in range(args.runs):
        for name, command in measured.items():
            times[name].append(run_once(command, envs[name], allowed[name]))
    print("load after:", os.getloadavg(), file=sys.stderr)

    floor = statistics.median(t for t, _ in times["floor: read and hash"])
    cunumpy_time = statistics.median(t for t, _ in times["import cunumpy"])
    print(f"| {len(files)} files ({whose}'s), {size / 1e6:.2f} MB{', --only ' + args.only if args.only else ''}; median of {args.runs} "
          "| wall | / floor | `import cunumpy` / it | peak RSS |")
    print("|---|---|---|---|---|")
    for name, samples in times.items():
        wall = statistics.median(t for t, _ in samples)
        rss = max(m for _, m in samples)
        print(f"| {name} | {wall * 1000:.1f} ms | {wall / floor:.2f}x | {cunumpy_time / wall:.1f}x | {rss:.1f} MB |")
    listing.unlink()


if __name__ == "__main__":
    main()
