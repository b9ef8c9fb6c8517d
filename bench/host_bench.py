"""Benchmarks of host (Pyccel) builds, run on demand; figures go to bench/RESULTS.md.

    .venv/bin/python bench/host_bench.py startup [--runs N] [--write]
    .venv/bin/python bench/host_bench.py warm-build --struphy DIR --cache DIR [--runs N] [--write]

startup:     wall time of a Python program that loads every host kernel of the
             example package through cunumpy's PyccelCache (the guide's way to
             build all kernels before a run), from a cache filled by
             `cunumpy-kernels build`, and from an empty cache (cunumpy runs
             pyccel), beside `python -c "import cunumpy"`.
warm-build:  wall time of `cunumpy-kernels build --only host` over Struphy's
             tree when every module is cached, beside `python -c "import cunumpy"`.
             The cache must hold a complete build already (a cold build takes
             minutes; the command prints how to make one).

Each figure is the median of N runs, with the fastest and slowest beside it.
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(os.environ.get("CUNUMPY_KERNELS", ROOT / "build" / "tools" / "cunumpy-kernels"))
# The project's interpreter (scripts/setup fills it), never whatever python3 comes first.
PYTHON = str(ROOT / ".venv" / "bin" / "python")
if not Path(PYTHON).exists():
    sys.exit(f"{PYTHON} is missing: run scripts/setup first")
EXAMPLE = ROOT / "share" / "examples" / "particles"
RESULTS = ROOT / "bench" / "RESULTS.md"

LOAD_ALL = (
    "from particles.kernels import catalog\n"
    "for name in catalog:\n"
    "    assert catalog[name].host_kernel.kernel.available('pyccel'), catalog[name].host_kernel.kernel.errors\n"
)


def timed(command, env=None, cwd=None):
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def summary(times):
    return f"{statistics.median(times) * 1000:.0f} ms (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})"


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_KERNEL_CACHE") and not k.endswith("_OPENMP")}
    env.update(extra)
    return env


def bench_startup(runs):
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "particles"
        shutil.copytree(EXAMPLE, tree, ignore=shutil.ignore_patterns("__pycache__", "__pyccel__"))
        src = tree / "src"
        filled = Path(tmp) / "filled"
        subprocess.run([CLI, "build", "--only", "host", "--python", PYTHON, "--cache-dir", filled, src], check=True,
                       stdout=subprocess.DEVNULL)
        program = [PYTHON, "-c", LOAD_ALL]
        import_only = [timed([PYTHON, "-c", "import cunumpy"], environment()) for _ in range(runs)]
        warm = [timed(program, environment(PYTHONPATH=str(src), PARTICLES_KERNEL_CACHE=str(filled)))
                for _ in range(runs)]
        cold = []
        for i in range(max(1, runs // 2)):
            empty = Path(tmp) / f"empty{i}"
            cold.append(timed(program, environment(PYTHONPATH=str(src), PARTICLES_KERNEL_CACHE=str(empty))))
    return [
        ("`python -c \"import cunumpy\"`", summary(import_only)),
        ("program loading push, deposit, sort: cache filled by `cunumpy-kernels build`", summary(warm)),
        (f"the same program, empty cache (cunumpy runs pyccel 3 times; {len(cold)} runs)", summary(cold)),
    ]


def bench_warm_build(struphy, cache, runs, openmp):
    command = [CLI, "build", "--only", "host", "--python", PYTHON, "--cache-dir", cache, struphy]
    if not openmp:
        command.insert(4, "--no-openmp")
    check = subprocess.run([*command, "--dry-run"], capture_output=True, text=True, env=environment())
    last = check.stdout.strip().splitlines()[-1] if check.stdout.strip() else check.stderr
    if not last.startswith("0 to build"):
        sys.exit(f"the cache is not complete ({last}); fill it first:\n  {' '.join(map(str, command))}")
    cached = last.split(", ")[1]
    import_only = [timed([PYTHON, "-c", "import cunumpy"], environment()) for _ in range(runs)]
    warm = [timed(command, environment()) for _ in range(runs)]
    return [
        ("`python -c \"import cunumpy\"`", summary(import_only)),
        (f"warm `cunumpy-kernels build --only host` of Struphy's tree ({cached})", summary(warm)),
    ]


def write(section, rows, note):
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    machine = f"{platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}"
    table = "\n".join([begin, f"Measured on {machine}. {note}", "", "| what | wall time |", "|---|---|",
                       *[f"| {what} | {value} |" for what, value in rows], end])
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if begin in text:
        text = text[: text.index(begin)] + table + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + table + "\n"
    RESULTS.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["startup", "warm-build"])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--struphy", type=Path, help="Struphy's source tree (the folder holding struphy/)")
    parser.add_argument("--cache", type=Path, help="cache holding a complete host build of that tree")
    parser.add_argument("--no-openmp", action="store_true",
                        help="warm-build: the serial build (with OpenMP, 12 of Struphy's modules fail in C and would "
                             "be attempted again by every build)")
    parser.add_argument("--write", action="store_true", help="record the figures in bench/RESULTS.md")
    args = parser.parse_args()
    if args.what == "startup":
        rows = bench_startup(args.runs)
        note = (f"Pyccel 2.2.3, C, OpenMP, the example package of share/examples/particles. "
                f"Load average while measuring: {os.getloadavg()[0]:.1f}.")
    else:
        if not args.struphy or not args.cache:
            parser.error("warm-build needs --struphy and --cache")
        rows = bench_warm_build(args.struphy / "struphy", args.cache, args.runs, not args.no_openmp)
        note = (f"Struphy 3.5.0, Pyccel 2.2.3, C, OpenMP {'off' if args.no_openmp else 'on'}. Target: under 100 ms. "
                f"Load average while measuring: {os.getloadavg()[0]:.1f}.")
    for what, value in rows:
        print(f"{what}: {value}")
    if args.write:
        write(f"host-{args.what}", rows, note)


if __name__ == "__main__":
    main()
