"""The multi-node scenarios of issue 45 on a GlusterFS volume that tests/netfs/run.sh mounted.

Each "node" is a process in a UTS namespace of its own (its host name) and a
mount namespace of its own in which its client mount of the volume is bound at
one path, the same on every node, as a cluster mounts its shared file system:
node-a and node-b through mounts with GlusterFS's default caches (1 s),
node-c through a mount with long attribute, entry and negative caches (an NFS
client with long timeouts). Trees, the cache and bundles live on the volume;
each node's HOME and TMPDIR are local. What a node wrote is checked on the
brick, the server's own copy, which no client cache can blur.

Compilers are counted through a wrapper toolkit whose nvcc logs each compile
(host name, pid, arguments) to a local file, and can be held while a file
exists, as tests/e2e/test_build_locks.py does.

Prints one block of figures a scenario and a list of checks; exits 1 when a
check failed. Run through run.sh, which sets the volume up and takes it down.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

TRY_AGAIN = 75


class Cluster:
    """The nodes, the shared path, the CLI and what every command of a scenario needs."""

    def __init__(self, args):
        self.args = args
        self.work = Path(args.work)
        self.shared = Path(args.shared)
        self.mounts = dict(spec.split("=", 1) for spec in args.mount)
        self.brick = Path(args.brick)
        self.toolkit, self.calls, self.hold = self.work / "toolkit", self.work / "nvcc-calls", self.work / "hold"
        self.checks = []
        self.figures = []
        self.started = []  # every run, so that none outlives its scenario
        self.make_toolkit()

    # --- the toolkit -----------------------------------------------------------------------------

    def make_toolkit(self):
        """nvcc as a script that logs each compile and waits while `hold` exists, then runs the real one.

        A file, not a variable: compilers run in an environment the tool builds."""
        real = Path(self.args.cuda_root).resolve()
        (self.toolkit / "bin").mkdir(parents=True, exist_ok=True)
        if not (self.toolkit / "include").exists():
            (self.toolkit / "include").symlink_to(real / "include")
        nvcc = self.toolkit / "bin" / "nvcc"
        nvcc.write_text(
            "#!/bin/sh\n"
            'case " $* " in *" --version "*) ;; *)\n'
            f'  echo "$(uname -n) $$ $*" >> {self.calls}\n'
            f'  while [ -e {self.hold} ]; do sleep 0.1; done ;;\n'
            "esac\n"
            f'exec {real}/bin/nvcc "$@"\n'
        )
        nvcc.chmod(0o755)
        self.calls.touch()

    def compiles(self, tree):
        """(host, pid) of each compile of a tree's sources so far."""
        marker = f"/trees/{tree}/"
        return [tuple(line.split(" ", 2)[:2]) for line in self.calls.read_text().splitlines() if marker in line]

    # --- trees on the volume ---------------------------------------------------------------------

    def make_tree(self, name, salt=1):
        """A package of `kernels` small CUDA kernels (no host build) on the volume, written through node-a's mount."""
        root = Path(self.mounts["node-a"]) / "trees" / name
        package = root / "src" / name.replace("-", "_")
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text("")
        for k in range(self.args.kernels):
            kernel = f"k{k:02d}"
            folder = package / kernel
            folder.mkdir(exist_ok=True)
            (folder / f"{kernel}_kernels.py").write_text(
                f"def {kernel}(x: 'float[:]', y: 'float[:]', n: int):\n    pass\n")
            (folder / f"{kernel}_cuda.cu").write_text(  # the tree's name in it: keys of its own
                f"// {name}\n"
                f'extern "C" __global__ void {kernel}(const double* x, double* y, long long n)\n'
                "{\n    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                f"    if (i < n) y[i] = {salt}.0 * x[i] + {k}.0;\n}}\n"
            )
        return self.shared / "trees" / name / "src"

    # --- commands on nodes -----------------------------------------------------------------------

    def command(self, node, argv, env=None):
        """argv run on `node`: its host name, its mount bound at the shared path, a clean environment.

        unshare and sh exec, so the process started is the CLI's own (its pid is the lock holder's)."""
        home = self.work / "nodes" / node
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        variables = {"HOME": str(home), "TMPDIR": str(home / "tmp"), "PATH": os.environ["PATH"], "NO_COLOR": "1",
                     "LANG": "C.UTF-8"}
        if os.environ.get("LD_LIBRARY_PATH"):
            variables["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
        variables.update(env or {})
        script = 'hostname "$1" && mount --bind "$2" "$3" && shift 3 && exec "$@"'
        return ["unshare", "--uts", "--mount", "--", "/bin/sh", "-c", script, "sh", node, self.mounts[node],
                str(self.shared), "env", "-i", *[f"{k}={v}" for k, v in variables.items()], self.args.cli,
                *map(str, argv)]

    def start(self, node, argv, log, env=None):
        """Starts argv on node, standard output and error to log.out and log.err (a batch job's log)."""
        log.parent.mkdir(parents=True, exist_ok=True)
        out, err = open(f"{log}.out", "w"), open(f"{log}.err", "w")
        process = subprocess.Popen(self.command(node, argv, env), stdout=out, stderr=err, start_new_session=True,
                                   cwd=self.work / "nodes" / node)
        out.close()
        err.close()
        self.started.append(Run(node, process, log))
        return self.started[-1]

    def run(self, node, argv, log, env=None, timeout=600):
        run = self.start(node, argv, log, env)
        run.wait(timeout)
        return run

    def run_again_on_75(self, node, argv, log, env=None):
        """Runs argv until it exits other than 75 (try again), a second apart, as a job script's loop would;
        returns every attempt."""
        attempts = [self.run(node, argv, Path(f"{log}-0"), env)]
        while attempts[-1].rc == TRY_AGAIN and len(attempts) <= self.args.tries:
            time.sleep(1)
            attempts.append(self.run(node, argv, Path(f"{log}-{len(attempts)}"), env))
        return attempts

    def build_args(self, tree, jobs=1, *extra):
        return ["build", "--only", "cuda", "--compiler", "nvcc", "--cuda-root", self.toolkit, "--arch", "sm_90",
                "--no-ptx", "--python", self.args.python, "--cache-dir", self.shared / "cache", "--jobs", jobs,
                "--json", *extra, tree]

    def cache_args(self, *argv):
        return ["cache", *argv, "--cache-dir", self.shared / "cache"]

    # --- the server's view -----------------------------------------------------------------------

    def entries(self):
        """Published CUDA entries on the brick: key -> manifest (None when the folder has no whole manifest)."""
        found = {}
        for entry in (self.brick / "cache" / "cuda").glob("*/*"):
            if ".lock" in entry.name or not entry.is_dir():
                continue
            try:
                found[entry.name] = json.loads((entry / "manifest.json").read_text())
            except (OSError, ValueError):
                found[entry.name] = None
        return found

    def locks(self):
        """Build locks on the brick: path -> holder (host:pid)."""
        held = {}
        for lock in (self.brick / "cache" / "cuda").glob("*/*.lock*"):
            try:
                holder = json.loads(lock.read_text())
                held[str(lock)] = f"{holder['host']}:{holder['pid']}"
            except (OSError, ValueError, KeyError):
                held[str(lock)] = "?"
        return held

    # --- results ---------------------------------------------------------------------------------

    def check(self, scenario, what, ok, detail=""):
        self.checks.append((scenario, what, bool(ok), detail))
        print(f"  [{'ok' if ok else 'FAILED'}] {what}" + (f": {detail}" if detail and not ok else ""), flush=True)

    def figure(self, scenario, text):
        self.figures.append((scenario, text))
        print(f"  {text}", flush=True)


class Run:
    """One CLI process on one node, its exit status and its JSON report."""

    def __init__(self, node, process, log):
        self.node, self.process, self.log = node, process, log
        self.started, self.ended, self.rc = time.monotonic(), None, None

    @property
    def pid(self):
        return self.process.pid

    @property
    def who(self):
        return f"{self.node}:{self.pid}"

    def poll(self):
        if self.rc is None and self.process.poll() is not None:
            self.rc, self.ended = self.process.returncode, time.monotonic()
        return self.rc

    def wait(self, timeout=600):
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            self.process.wait()
        self.poll()
        return self.rc

    def stdout(self):
        return Path(f"{self.log}.out").read_text(errors="replace")

    def stderr(self):
        return Path(f"{self.log}.err").read_text(errors="replace")

    def report(self):
        try:
            return json.loads(self.stdout())
        except ValueError:
            return None

    def jobs(self):
        report = self.report()
        return report["jobs"] if report else []


def wait_all(runs, timeout=600):
    deadline = time.monotonic() + timeout
    for run in runs:
        run.wait(max(1, deadline - time.monotonic()))


def wait_until(condition, runs=(), seconds=120, what="a condition"):
    """Polls until condition() holds; fails when a run ends first or time is up."""
    deadline = time.monotonic() + seconds
    while not condition():
        ended = [run.who for run in runs if run.poll() is not None]
        if ended or time.monotonic() > deadline:
            raise RuntimeError(f"waiting for {what}: " + (f"{ended} ended" if ended else f"{seconds} s passed"))
        time.sleep(0.1)


def exit_codes(runs):
    return dict(sorted(Counter(run.rc for run in runs).items()))


def stale_file(stderr):
    """What a 'Stale file handle' error named: the bundle, or the cache folder of the file (.probes, cuda-last)."""
    match = re.search(r"(?:cannot read )?(/\S+?):? (?:cannot read the bundle: )?Stale file handle", stderr)
    if not match:
        return None
    path = match.group(1).rstrip(":")
    if path.endswith(".ckb"):
        return "the bundle"
    parts = path.split("/cache/", 1)
    return parts[1].split("/")[0] + "/" if len(parts) == 2 else path


def process_alive(pid):
    """Whether pid runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# --- the scenarios ---------------------------------------------------------------------------------


def check_builds(c, scenario, tree, runs, keys_expected, compiles_expected):
    """The promises of builders sharing a cache: exit 0, one compile per key across nodes, the report's
    published_by for keys compiled elsewhere, every reported entry whole on the server, no lock left."""
    c.check(scenario, "every builder exits 0", all(run.rc == 0 for run in runs), exit_codes(runs))
    compiles = c.compiles(tree)
    per_node = Counter(host for host, _ in compiles)
    c.figure(scenario, f"compiles: {len(compiles)} ({dict(sorted(per_node.items()))}), expected {compiles_expected}")
    c.check(scenario, f"exactly {compiles_expected} compiles ({keys_expected} keys)",
            len(compiles) == compiles_expected, f"{len(compiles)}")
    builder_of, states, waited = defaultdict(list), Counter(), []
    for run in runs:
        for job in run.jobs():
            states[(run.node, job["state"])] += 1
            if job["state"] == "built":
                builder_of[job["key"]].append(run.who)
            if job.get("reason", "").startswith("published by"):
                waited.append((run, job))
    c.figure(scenario, "jobs by node and state: " + ", ".join(f"{n} {s} {k}" for (n, s), k in sorted(states.items())))
    keys = {job["key"] for run in runs for job in run.jobs()}
    c.check(scenario, f"{keys_expected} keys, each built by exactly one builder",
            len(keys) == keys_expected and all(len(builder_of[k]) == 1 for k in keys),
            {k[:12]: builder_of.get(k) for k in keys})
    across = sum(1 for run, job in waited if builder_of.get(job["key"], [""])[0].split(":")[0] != run.node)
    c.figure(scenario, f"hits found published while waiting: {len(waited)}, of keys built on another node: {across}")
    wrong = [(run.who, job["reason"]) for run, job in waited
             if job["reason"] != f"published by {builder_of.get(job['key'], ['?'])[0]} while this one waited"]
    c.check(scenario, "each 'published by' names the builder that built the key (host:pid)", not wrong, wrong[:3])
    entries = c.entries()
    missing = [k for k in keys if not entries.get(k)]
    c.check(scenario, "every reported key has a whole entry on the server", not missing, missing)
    stamps = [k for k in keys
              if entries.get(k) and builder_of.get(k) and entries[k].get("published_by") != builder_of[k][0]]
    c.check(scenario, "each manifest's published_by is its builder's host:pid", not stamps,
            [(k[:12], entries[k].get("published_by"), builder_of[k]) for k in stamps][:3])
    c.check(scenario, "no build lock left", not c.locks(), c.locks())
    return builder_of


def cold(c, nodes, name):
    """Builders on two nodes start together on a cold cache: one compile per key across nodes."""
    scenario = f"cold builders, {' + '.join(nodes)}"
    print(f"\n== {scenario}", flush=True)
    tree = c.make_tree(name)
    started = time.monotonic()
    runs = [c.start(node, c.build_args(tree, 2), c.work / "logs" / name / f"{node}-{i}")
            for i in range(c.args.builders) for node in nodes]
    wait_all(runs)
    wall = max(run.ended for run in runs) - started
    c.figure(scenario, f"{len(runs)} builders ({c.args.builders} a node, --jobs 2), {c.args.kernels} kernels: "
                       f"wall {wall:.1f} s, builder times {min(r.ended - r.started for r in runs):.1f}.."
                       f"{max(r.ended - r.started for r in runs):.1f} s, exit codes {exit_codes(runs)}")
    check_builds(c, scenario, name, runs, c.args.kernels, c.args.kernels)


def killed_holder(c):
    """A holder on node-a is SIGKILLed mid-compile, as when its node dies: its compilers end with it, the
    waiters on node-b break its locks once they go untouched for the lock timeout (they cannot ask node-a
    whether the process lives), and each key is built once more."""
    scenario, name, k = "killed holder", "killed", c.args.kernels
    print(f"\n== {scenario}", flush=True)
    tree = c.make_tree(name)
    c.hold.touch()
    logs = c.work / "logs" / name
    # The holder too: it touches its locks every sixth of it, so that no waiter breaks them while it lives.
    short = {"CUNUMPY_KERNELS_LOCK_TIMEOUT": str(c.args.lock_timeout)}
    try:
        holder = c.start("node-a", c.build_args(tree, k), logs / "holder", short)
        wait_until(lambda: len(c.compiles(name)) >= k, [holder], what="the holder's compiles")
        compiler_pids = [int(pid) for _, pid in c.compiles(name)]
        waiters = [c.start("node-b", c.build_args(tree, k), logs / f"waiter-b{i}", short)
                   for i in range(c.args.builders)]
        time.sleep(2)
        c.check(scenario, "the waiters wait for the holder", all(w.poll() is None for w in waiters)
                and len(c.compiles(name)) == k, exit_codes(waiters))
        killed = time.monotonic()
        os.kill(holder.pid, signal.SIGKILL)  # the builder alone: its compilers must end with it
        holder.wait()
        time.sleep(1)
        alive = [pid for pid in compiler_pids if process_alive(pid)]
        c.check(scenario, "the killed builder's compilers ended with it", not alive, f"still running: {alive}")
    finally:
        c.hold.unlink(missing_ok=True)
    first_break = {}
    while any(w.poll() is None for w in waiters) and time.monotonic() - killed < 600:
        for w in waiters:
            if w.who not in first_break and "broke the build lock" in w.stderr():
                first_break[w.who] = time.monotonic() - killed
        time.sleep(0.05)
    wait_all(waiters)
    breaks = {w.who: w.stderr().count("broke the build lock") for w in waiters}
    c.figure(scenario, f"holder killed after its {k} compiles started; waiters: {c.args.builders} on node-b, "
                       f"lock timeout {c.args.lock_timeout} s; exit codes {exit_codes(waiters)}")
    c.figure(scenario, "first 'broke the build lock' seen, seconds after the kill: "
             + ", ".join(f"{who} {t:.1f}" for who, t in sorted(first_break.items(), key=lambda x: x[1])))
    c.figure(scenario, "waiters done, seconds after the kill: "
             + ", ".join(f"{w.who} {w.ended - killed:.1f}" for w in waiters))
    c.check(scenario, "some waiter broke the locks and said so", any(breaks.values()), breaks)
    printed_late = [who for who, t in first_break.items()
                    if next(w for w in waiters if w.who == who).ended - killed - t < 0.2]
    c.check(scenario, "each break was printed when it happened, not at the build's end", not printed_late,
            printed_late)
    check_builds(c, scenario, name, waiters, k, 2 * k)


def paused_holder(c):
    """Slurm's suspend then cancel: node-a's holder SIGSTOPped, node-b's builder breaks its locks after the
    timeout and takes them, the holder gets SIGTERM then SIGCONT: it must leave node-b's locks alone."""
    scenario, name, k = "paused holder", "paused", c.args.kernels
    print(f"\n== {scenario}", flush=True)
    tree = c.make_tree(name)
    logs = c.work / "logs" / name
    c.hold.touch()
    try:
        paused = c.start("node-a", c.build_args(tree, k), logs / "paused")
        wait_until(lambda: len(c.compiles(name)) >= k, [paused], what="the paused builder's compiles")
        os.kill(paused.pid, signal.SIGSTOP)
        before = set(c.locks().values())
        c.check(scenario, "the paused builder holds every lock", before == {f"node-a:{paused.pid}"}, before)
        breaker = c.start("node-b", c.build_args(tree, k), logs / "breaker",
                          {"CUNUMPY_KERNELS_LOCK_TIMEOUT": str(c.args.lock_timeout)})
        wait_until(lambda: len(c.compiles(name)) >= 2 * k, [breaker], what="the breaker's compiles")
        taken = set(c.locks().values())
        c.check(scenario, "the breaker broke and took every lock", taken == {breaker.who}, taken)
        os.kill(paused.pid, signal.SIGTERM)
        os.kill(paused.pid, signal.SIGCONT)
        paused.wait(60)
        after = set(c.locks().values())
        c.figure(scenario, f"paused builder after SIGTERM: exit {paused.rc} (-15: died of SIGTERM); locks held by "
                           f"{sorted(after)}")
        c.check(scenario, "the paused builder died of SIGTERM", paused.rc == -signal.SIGTERM, paused.rc)
        c.check(scenario, "its handler left the locks the breaker holds", after == {breaker.who}, after)
        third = c.start("node-a", c.build_args(tree, k), logs / "third")
        time.sleep(3)
        c.check(scenario, "a third builder waits for the breaker, compiling nothing",
                third.poll() is None and len(c.compiles(name)) == 2 * k, f"{len(c.compiles(name))} compiles")
    finally:
        c.hold.unlink(missing_ok=True)
    wait_all([breaker, third])
    c.figure(scenario, f"breaker: exit {breaker.rc}, {breaker.stderr().count('broke the build lock')} locks broken; "
                       f"third builder: exit {third.rc}, states {dict(Counter(j['state'] for j in third.jobs()))}")
    check_builds(c, scenario, name, [breaker, third], k, 2 * k)


def retried(attempts):
    """How a command run again on 75 went: 'exit 0' or '75 x3 over 2.4 s, then exit 0'."""
    last = attempts[-1]
    if len(attempts) == 1:
        return f"exit {last.rc}"
    return (f"75 x{len(attempts) - 1} over {attempts[-1].started - attempts[0].started:.1f} s, "
            f"then exit {last.rc}")


def clean_then_build(c):
    """Right after `cache clean` on node-b, node-c (long caches) and node-a, which had seen every entry, must
    find none of them: a hit then would be a false one. A build that exits 75 is run again a second later."""
    scenario, name, k = "clean, then build on the other nodes", "clean", c.args.kernels
    print(f"\n== {scenario}", flush=True)
    tree = c.make_tree(name)
    logs = c.work / "logs" / name
    for node in ("node-a", "node-c", "node-b"):  # node-a builds, the others hit: every node has seen every entry
        seeded = c.run_again_on_75(node, c.build_args(tree, 2), logs / f"seed-{node}")
        states = Counter(job["state"] for job in seeded[-1].jobs())
        c.figure(scenario, f"seeding build on {node}: {retried(seeded)}, states {dict(states)}")
        c.check(scenario, f"the seeding build on {node} ends 0", seeded[-1].rc == 0, seeded[-1].stderr()[-300:])
    for node in ("node-c", "node-a"):
        clean = c.run("node-b", c.cache_args("clean"), logs / f"clean-before-{node}")
        present = len(c.entries())
        attempts = c.run_again_on_75(node, c.build_args(tree, 2), logs / f"after-clean-{node}")
        build = attempts[-1]
        states = Counter(job["state"] for job in build.jobs())
        c.figure(scenario, f"clean on node-b: exit {clean.rc}, entries left {present}; at once build on {node}: "
                           f"{retried(attempts)}, states {dict(states)}")
        if len(attempts) > 1:
            c.figure(scenario, f"  {node}'s first error: {attempts[0].stderr().strip()[:300]}")
        c.check(scenario, f"{node}: no false hit after the clean ({k} built, 0 hits)",
                build.rc == 0 and states.get("built", 0) == k and not states.get("hit"),
                f"exit {build.rc}, {dict(states)}, stderr: {build.stderr()[-500:]}")
        whole = [key for key, manifest in c.entries().items() if manifest]
        c.check(scenario, f"{node}: its {k} entries are whole on the server", len(whole) == k, len(whole))


def clean_during_builds(c):
    """`cache clean` looping on node-b while builders on node-a and node-b fill a cold cache: every builder
    ends 0, no lock and no half entry is left, and the next build hits only what is there."""
    scenario, name, k = "clean during builds", "clean-during", c.args.kernels
    print(f"\n== {scenario}", flush=True)
    tree = c.make_tree(name)
    logs = c.work / "logs" / name
    builders = [c.start(node, c.build_args(tree, 1), logs / f"{node}-{i}")
                for i in range(c.args.builders) for node in ("node-a", "node-b")]
    cleans = []
    while any(b.poll() is None for b in builders):
        cleans.append(c.run("node-b", c.cache_args("clean"), logs / f"clean-{len(cleans)}"))
        time.sleep(0.3)
    wait_all(builders)
    c.figure(scenario, f"{len(builders)} builders: exit codes {exit_codes(builders)}; {len(cleans)} cleans: exit "
                       f"codes {exit_codes(cleans)}; compiles {len(c.compiles(name))}")
    c.check(scenario, "every builder exits 0", all(b.rc == 0 for b in builders),
            [(b.who, b.rc, b.stderr()[-300:]) for b in builders if b.rc][:2])
    c.check(scenario, "every clean exits 0", all(r.rc == 0 for r in cleans),
            [(r.rc, r.stderr()[-300:]) for r in cleans if r.rc][:2])
    c.check(scenario, "no build lock left", not c.locks(), c.locks())
    verify = c.run("node-a", c.cache_args("verify"), logs / "verify")
    c.check(scenario, "cache verify finds no bad entry", verify.rc == 0,
            verify.stdout()[-500:] + verify.stderr()[-500:])
    present = {key for key, manifest in c.entries().items() if manifest}
    attempts = c.run_again_on_75("node-a", c.build_args(tree, 2), logs / "after")
    after = attempts[-1]
    hits = {job["key"] for job in after.jobs() if job["state"] == "hit"}
    c.figure(scenario, f"entries left {len(present)}; the next build on node-a: {retried(attempts)}, "
                       f"{len(hits)} hits, {sum(j['state'] == 'built' for j in after.jobs())} built")
    if len(attempts) > 1:
        c.figure(scenario, f"  its first error: {attempts[0].stderr().strip()[:300]}")
    c.check(scenario, "the next build hits only entries that are there, builds the rest",
            after.rc == 0 and hits <= present and len(after.jobs()) == k, f"hits {len(hits)}, present {len(present)}")


def prune_during_builds(c):
    """`cache prune --superseded` looping on node-b while builders on node-a and node-b build a tree's new
    version: the old version's entries go, no entry a completed build reported is lost."""
    scenario, name, k = "prune during builds", "prune", c.args.kernels
    print(f"\n== {scenario}", flush=True)
    tree = c.make_tree(name, salt=1)
    logs = c.work / "logs" / name
    first = c.run("node-a", c.build_args(tree, 2), logs / "v1")
    old = {job["key"] for job in first.jobs()}
    c.check(scenario, f"version 1 built ({k} entries)", first.rc == 0 and len(old) == k, first.rc)
    c.make_tree(name, salt=2)  # every kernel edited: version 2, new keys
    time.sleep(2)  # past node-b's attribute cache, which could show it version 1's stat (this scenario is prune's)
    builders = [c.start(node, c.build_args(tree, 1), logs / f"{node}-{i}")
                for i in range(c.args.builders) for node in ("node-a", "node-b")]
    prunes = []
    while any(b.poll() is None for b in builders):
        prunes.append(c.run("node-b", c.cache_args("prune", "--superseded"), logs / f"prune-{len(prunes)}"))
        time.sleep(0.3)
    wait_all(builders)
    prunes.append(c.run("node-b", c.cache_args("prune", "--superseded"), logs / "prune-last"))
    reported = {job["key"] for b in builders for job in b.jobs()}
    entries = c.entries()
    lost = sorted(key for key in reported if not entries.get(key))
    c.figure(scenario, f"{len(builders)} builders: exit codes {exit_codes(builders)}; {len(prunes)} prunes: exit "
                       f"codes {exit_codes(prunes)}; version 1 entries left {len(old & set(entries))} of {k}; "
                       f"version 2 entries {len(reported & set(entries))} of {len(reported)}")
    c.check(scenario, "every builder and every prune exits 0", all(r.rc == 0 for r in builders + prunes),
            [(r.who, r.rc, r.stderr()[-300:]) for r in builders + prunes if r.rc][:2])
    c.check(scenario, "no entry a completed build reported is lost", not lost and len(reported) == k, lost)
    c.check(scenario, "the superseded version 1 entries are pruned", not (old & set(entries)), len(old & set(entries)))
    c.check(scenario, "no build lock left", not c.locks(), c.locks())


def bundle_rewritten_while_read(c):
    """node-a rewrites a bundle (same content) again and again while readers on node-b and node-c run
    `status --bundle`: each read says current (0) or try again (75), never "stale" (1)."""
    scenario, name = "bundle rewritten while read", "bundle"
    print(f"\n== {scenario}", flush=True)
    tree = c.make_tree(name)
    logs = c.work / "logs" / name
    built = c.run("node-a", c.build_args(tree, 2), logs / "build")
    bundle = c.shared / "kernels.ckb"
    bundle_args = ["bundle", "--output", bundle, "--compiler", "nvcc", "--cuda-root", c.toolkit, "--arch", "sm_90",
                   "--no-ptx", "--python", c.args.python, "--cache-dir", c.shared / "cache", tree]
    made = c.run("node-a", bundle_args, logs / "bundle-0")
    c.check(scenario, "the tree is built and bundled", built.rc == 0 and made.rc == 0, made.stderr()[-500:])
    status_args = ["status", "--bundle", bundle, "--cuda-root", c.toolkit]
    for node in ("node-b", "node-c"):
        quiet = c.run_again_on_75(node, status_args, logs / f"quiet-{node}")
        c.figure(scenario, f"with no writer, status --bundle on {node}: {retried(quiet)}")
        if len(quiet) > 1:
            c.figure(scenario, f"  its first error: {quiet[0].stderr().strip()[:300]}")
        c.check(scenario, f"with no writer, status --bundle on {node} says current (0)", quiet[-1].rc == 0,
                (quiet[-1].rc, quiet[-1].stdout()[-300:], quiet[-1].stderr()[-300:]))
    done = threading.Event()
    reads = []  # (node, exit status, seconds, ESTALE named)

    def reader(node, index):
        n = 0
        while not done.is_set():
            run = c.run(node, status_args, logs / f"read-{node}-{index}-{n}")
            reads.append((node, run.rc, run.ended - run.started, "Stale file handle" in run.stderr(), run))
            n += 1

    threads = [threading.Thread(target=reader, args=(node, i), daemon=True) for i in range(c.args.readers)
               for node in ("node-b", "node-c")]
    for thread in threads:
        thread.start()
    writes = []
    started = time.monotonic()
    for n in range(c.args.rewrites):
        writes.append(c.run("node-a", bundle_args, logs / f"bundle-{n + 1}"))
    written = time.monotonic() - started
    time.sleep(1)
    done.set()
    for thread in threads:
        thread.join()
    c.figure(scenario, f"{len(writes)} rewrites on node-a in {written:.1f} s, exit codes {exit_codes(writes)}; "
                       f"{c.args.readers} readers each on node-b and node-c")
    for node in ("node-b", "node-c"):
        mine = [r for r in reads if r[0] == node]
        codes = dict(sorted(Counter(r[1] for r in mine).items()))
        named = sum(1 for r in mine if r[3])
        mean = sum(r[2] for r in mine) / len(mine) if mine else 0
        files = dict(Counter(stale_file(r[4].stderr()) for r in mine if r[1] == TRY_AGAIN))
        c.figure(scenario, f"{node}: {len(mine)} reads, exit codes {codes}, 'Stale file handle' named in {named} "
                           f"(files: {files}), {mean:.2f} s a read")
    wrong = [r for r in reads if r[1] not in (0, TRY_AGAIN)]
    c.check(scenario, "every rewrite exits 0", all(w.rc == 0 for w in writes), exit_codes(writes))
    c.check(scenario, "every read exits 0 (current) or 75 (try again), never 1 (stale)", not wrong,
            [(r[0], r[1], r[4].stdout()[-300:], r[4].stderr()[-300:]) for r in wrong][:2])


SCENARIOS = {
    "cold": lambda c: cold(c, ("node-a", "node-b"), "cold-ab"),
    "cold-long": lambda c: cold(c, ("node-a", "node-c"), "cold-ac"),
    "killed": killed_holder,
    "paused": paused_holder,
    "clean": clean_then_build,
    "clean-during": clean_during_builds,
    "prune-during": prune_during_builds,
    "bundle": bundle_rewritten_while_read,
}


def end_every_run(cluster):
    """Kills what a scenario left running (it broke down, or was interrupted), so that none outlives it."""
    cluster.hold.unlink(missing_ok=True)
    for run in cluster.started:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--cuda-root", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--shared", required=True, help="the path each node sees the volume at")
    parser.add_argument("--mount", action="append", required=True, help="node=client mount")
    parser.add_argument("--brick", required=True)
    parser.add_argument("--builders", type=int, default=4)
    parser.add_argument("--kernels", type=int, default=4)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--rewrites", type=int, default=20)
    parser.add_argument("--lock-timeout", type=int, default=5)
    parser.add_argument("--tries", type=int, default=90, help="runs again of a command that exits 75")
    parser.add_argument("--only", default=",".join(SCENARIOS))
    args = parser.parse_args()
    cluster = Cluster(args)
    started = time.monotonic()
    # run.sh's cleanup ends this with SIGTERM: the commands it started must end before the volume is unmounted.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    for name in args.only.split(","):
        try:
            SCENARIOS[name](cluster)
        except Exception as error:  # one scenario's breakdown is a failed check, the others still run
            cluster.check(name, "the scenario ran to its end", False, f"{type(error).__name__}: {error}")
        finally:
            end_every_run(cluster)
    failed = [check for check in cluster.checks if not check[2]]
    print(f"\n== {len(cluster.checks) - len(failed)} checks passed, {len(failed)} failed, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    for scenario, what, _, detail in failed:
        print(f"FAILED {scenario}: {what}: {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
