"""Cold CUDA builds of a kernel tree: a baseline binary against the current one (issue 14).

    .venv/bin/python bench/cold_cuda_build.py --baseline OLD_CLI [--cli build/tools/cunumpy-kernels]
        --tree STRUPHY_TREE [--compiler nvrtc|nvcc] [--jobs 2] [--kernels N] [--rounds 1] [--compare-code]

Each round builds the tree's CUDA kernels (`build --only cuda`, default targets) once with each
binary, in turn, each into a fresh cache, and times the whole process (wall, and user + sys of the
process and its children). The current binary's `--json` report adds the schedule (the sum of the
compiler runs' times, the wall time of the compile phase) and the time per phase. Prints one
Markdown table; run it on a quiet machine (`uptime` before and after is printed).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kernel_folders(tree, count):
    """The first `count` kernel folders (with a `<name>_cuda.cu`) under `tree`, by path."""
    folders = sorted(path.parent for path in Path(tree).rglob("*_cuda.cu") if path.name == path.parent.name + "_cuda.cu")
    return folders[:count]


def elf_sections(data):
    """{name: bytes} of an ELF64 file's sections: enough to compare two cubins' machine code."""
    def number(at, size):
        return int.from_bytes(data[at:at + size], "little")
    table, entry_size, count, names = number(0x28, 8), number(0x3a, 2), number(0x3c, 2), number(0x3e, 2)
    names_at = number(table + names * entry_size + 0x18, 8)
    sections = {}
    for i in range(count):
        header = table + i * entry_size
        start = names_at + number(header, 4)
        name = data[start:data.index(b"\0", start)].decode()
        sections[name] = data[number(header + 0x18, 8):number(header + 0x18, 8) + number(header + 0x20, 8)]
    return sections


def compare_code(baseline_report, report):
    """Per target, whether the current build's machine code (.text.* sections) and kernel
    attributes (.nv.info.*) equal the baseline's; PTX compared whole."""
    def artifacts(r):
        return {(j["module"], j["target"]): Path(j["artifacts"][0]) for j in r["jobs"] if j["state"] == "built"}
    before, after = artifacts(baseline_report), artifacts(report)
    same, differ = 0, []
    for job, path in sorted(before.items()):
        old, new = path.read_bytes(), after[job].read_bytes()
        if job[1].startswith("compute_"):
            equal = old == new
        else:
            a, b = elf_sections(old), elf_sections(new)
            code = [n for n in a if n.startswith((".text.", ".nv.info.", ".nv.constant0.", ".nv.shared."))]
            equal = all(a[n] == b.get(n) for n in code) and sorted(code) == sorted(
                n for n in b if n.startswith((".text.", ".nv.info.", ".nv.constant0.", ".nv.shared.")))
        if equal:
            same += 1
        else:
            differ.append(f"{job[0]} {job[1]}")
    return same, differ


def build_once(cli, paths, args, work):
    cache = Path(tempfile.mkdtemp(dir=work, prefix="cache-"))
    command = [str(cli), "build", "--only", "cuda", "--jobs", str(args.jobs), "--compiler", args.compiler,
               "--python", args.python, "--cache-dir", str(cache), "--json", *map(str, paths)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{cli} failed ({result.returncode}):\n{result.stderr[-3000:]}\n{result.stdout[-3000:]}")
    report = json.loads(result.stdout)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True, help="the binary to compare against")
    parser.add_argument("--cli", default=str(ROOT / "build" / "tools" / "cunumpy-kernels"))
    parser.add_argument("--tree", required=True, help="a kernel tree, e.g. Struphy's unpacked wheel")
    parser.add_argument("--compiler", default="nvrtc", choices=["nvrtc", "nvcc"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kernels", type=int, default=0, help="only the first N kernel folders (0: the whole tree)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--compare-code", action="store_true",
                        help="also compare every artifact's machine code with the baseline's")
    args = parser.parse_args()

    paths = kernel_folders(args.tree, args.kernels) if args.kernels else [args.tree]
    print("load before:", os.getloadavg(), file=sys.stderr)
    runs = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory(prefix="cold-cuda-build.") as work:
        for _ in range(args.rounds):
            for name, cli in (("baseline", args.baseline), ("current", args.cli)):
                runs[name].append(build_once(cli, paths, args, work))
                print(name, f"{runs[name][-1][0]:.1f} s", file=sys.stderr)
        print("load after:", os.getloadavg(), file=sys.stderr)
        if args.compare_code:
            same, differ = compare_code(runs["baseline"][-1][2], runs["current"][-1][2])
            print(f"machine code equal to the baseline's: {same} artifacts; different: {len(differ)} {differ}")

    base_wall = statistics.median(r[0] for r in runs["baseline"])
    wall = statistics.median(r[0] for r in runs["current"])
    base_cpu = statistics.median(r[1] for r in runs["baseline"])
    cpu = statistics.median(r[1] for r in runs["current"])
    report = runs["current"][-1][2]
    jobs = [j for j in report["jobs"] if j["state"] == "built"]
    schedule = report["schedule"]
    # Targets made in one compiler run share its `seconds` and its front end: count each run's phase once.
    phases = {}
    for job in jobs:
        for phase, seconds in job["phases"].items():
            shared = phase != "ptxas"
            run = (job["module"], job["seconds"]) if shared else (job["module"], job["target"])
            phases.setdefault(phase, {})[run] = seconds
    print(f"| {args.compiler}, --jobs {args.jobs}, {len(jobs)} targets of "
          f"{len({j['module'] for j in jobs})} kernels | baseline | current | speed-up |")
    print("|---|---|---|---|")
    print(f"| wall, whole process (median of {args.rounds}) | {base_wall:.1f} s | {wall:.1f} s | {base_wall / wall:.2f}x |")
    print(f"| CPU, user + sys | {base_cpu:.1f} s | {cpu:.1f} s | {base_cpu / cpu:.2f}x |")
    print(f"| current: compiler runs, sum of their wall times | | {schedule['job_seconds']:.1f} s in "
          f"{schedule['jobs']} runs | |")
    ideal = schedule["job_seconds"] / schedule["workers"]
    print(f"| current: compile phase wall / (sum / workers) | | {schedule['wall_seconds']:.1f} s / {ideal:.1f} s "
          f"= {schedule['wall_seconds'] / ideal:.3f} | |")
    print(f"| current: planning before the first compile | | {schedule['plan_seconds'] * 1000:.0f} ms | |")
    # A front end shared by two targets is reported on each: count it once per compiler run.
    for phase, by_job in sorted(phases.items()):
        distinct = sum(by_job.values())
        print(f"| current: phase {phase} (each run counted once) | | {distinct:.1f} s | |")


if __name__ == "__main__":
    main()
