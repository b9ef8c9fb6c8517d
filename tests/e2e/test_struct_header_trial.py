"""The faults a new user's trial of the struct header check found in running the writers, each
family whole: the writer's time limit holds whatever the writer does with processes and signals,
a warm check never remembers what changed while the writer ran nor what a process it started
read, the check's own errors are told apart from the writer's, and a writer may change folder.
(The layout reader's families: test_struct_header_layouts.py.)"""

import json
import tempfile
import time
from pathlib import Path

from conftest import PYTHON
from test_struct_abi import struct_tree
from test_struct_header_writers import HEADER_FREE_KERNEL, configure, writer_runs


def fixed_writer_tree(root: Path, module: str, source: str, headers: dict, extra="", python=PYTHON) -> Path:
    """A tree whose headers (name -> (function, committed text)) are written by sim/<module>.py."""
    tree = struct_tree(root, HEADER_FREE_KERNEL, python=python)
    (tree / "sim" / f"{module}.py").write_text(source)
    for name, (_, text) in headers.items():
        (tree / "sim" / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    configure(root, {f"src/sim/{name}": f"sim.{module}:{function}" for name, (function, _) in headers.items()},
              extra=extra, python=python)
    return tree


def logging_python(tmp_path: Path) -> Path:
    """A python that logs each run, so that a test counts the writers run."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "python.log"}\nexec {PYTHON} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


# 3: the time limit holds whatever the writer does.
TIMEOUT_WRITERS = '''
import os, signal, subprocess, time

def note(pid):
    with open(os.path.join(os.path.dirname(__file__), "pids"), "a") as f:
        f.write("%d\\n" % pid)

def sleeps_in_a_forked_child(path):
    child = os.fork()
    if child == 0:
        time.sleep(1000)
        os._exit(0)
    note(child)
    os.waitpid(child, 0)

def ignores_sigalrm(path):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(1000)

def waits_for_sleep(path):
    subprocess.run(["sleep", "1000"])

def leaves_sleep_behind(path):
    note(subprocess.Popen(["sleep", "1000"]).pid)
    open(path, "w").write("// behind\\n")
'''


def test_the_timeout_stops_a_writer_whatever_it_does_with_processes_and_signals(run, tmp_path):
    hanging = ["sleeps_in_a_forked_child", "ignores_sigalrm", "waits_for_sleep"]
    headers = {f"{w}.cuh": (w, "// never\n") for w in hanging}
    headers["behind.cuh"] = ("leaves_sleep_behind", "// behind\n")
    tree = fixed_writer_tree(tmp_path, "timeouts", TIMEOUT_WRITERS, headers, extra="struct-header-timeout = 2")
    start = time.monotonic()
    result = run("check-signatures", tree)
    assert time.monotonic() - start < 30, result.stdout
    assert result.returncode == 1
    for writer in hanging:
        assert f"sim/{writer}.cuh: error: its writer sim.timeouts:{writer} did not finish within 2 s and was " \
               "stopped (the struct-header-timeout key sets the limit)" in result.stdout, result.stdout
    assert "behind.cuh: error" not in result.stdout  # it finished; what it left running is stopped
    pids = [int(p) for p in (tree / "sim" / "pids").read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:  # gone, or a zombie waiting for init
        assert not Path(f"/proc/{pid}").exists() or " Z " in Path(f"/proc/{pid}/stat").read_text(), pid


# 4: a source edited while its writer runs is not remembered as read.
RACY_WRITER = '''
import os
from sim import racy_fields

def write(path):
    with open(path, "w") as f:
        f.write("struct Racy { %s n; };\\n" % racy_fields.WIDTH)
    with open(racy_fields.__file__, "w") as f:  # while the writer runs
        f.write('WIDTH = "long long"\\n')
'''


def test_a_source_edited_while_its_writer_runs_is_read_again_next_time(run, tmp_path):
    tree = fixed_writer_tree(tmp_path, "racy", RACY_WRITER, {"racy.cuh": ("write", "struct Racy { int n; };\n")})
    (tree / "sim" / "racy_fields.py").write_text('WIDTH = "int"\n')
    time.sleep(2.1)  # past the record's racy margin: only the writer's own edit is recent
    (run.home / ".cache" / "cunumpy-kernels").mkdir(parents=True)
    assert run("check-signatures", tree).returncode == 0  # what it read: int
    time.sleep(2.1)
    result = run("check-signatures", tree)
    assert result.returncode == 1, result.stdout  # not remembered: the writer runs on what the source says now
    assert "racy.cuh: error: differs from what sim.racy:write writes" in result.stdout
    assert "+struct Racy { long long n; };" in result.stdout


# 5: a writer that starts a process is never reused warm.
PROCESS_WRITERS = '''
import multiprocessing, os, subprocess, sys

HERE = os.path.dirname(__file__)

def header(path):
    width = subprocess.run(["cat", os.path.join(HERE, "width.txt")], capture_output=True, text=True).stdout.strip()
    open(path, "w").write("struct Sub { %s n; };\\n" % width)

def with_system(path):
    os.system("true")
    open(path, "w").write("// system\\n")

def with_posix_spawn(path):
    os.waitpid(os.posix_spawn("/bin/true", ["true"], os.environ), 0)
    open(path, "w").write("// posix_spawn\\n")

def with_exec(path):
    child = os.fork()
    if child == 0:
        os.execv("/bin/true", ["true"])
    os.waitpid(child, 0)
    open(path, "w").write("// exec\\n")

def nothing():
    pass

def with_multiprocessing(path):
    process = multiprocessing.Process(target=nothing)
    process.start()
    process.join()
    open(path, "w").write("// multiprocessing\\n")
'''


def test_a_writer_that_starts_a_process_runs_every_check(run, tmp_path):
    python = logging_python(tmp_path)
    headers = {"sub.cuh": ("header", "struct Sub { int n; };\n")}
    for kind in ["system", "posix_spawn", "exec", "multiprocessing"]:
        headers[f"{kind}.cuh"] = (f"with_{kind}", f"// {kind}\n")
    tree = fixed_writer_tree(tmp_path / "t", "processes", PROCESS_WRITERS, headers, python=python)
    (tree / "sim" / "width.txt").write_text("int\n")
    (run.home / ".cache" / "cunumpy-kernels").mkdir(parents=True)
    first = run("check-signatures", tree)
    assert first.returncode == 0, first.stdout + first.stderr
    assert writer_runs(tmp_path / "python.log") == 5
    assert run("check-signatures", tree).returncode == 0
    assert writer_runs(tmp_path / "python.log") == 10  # none remembered
    (tree / "sim" / "width.txt").write_text("long long\n")  # read only by `cat`
    result = run("check-signatures", tree)
    assert result.returncode == 1 and "+struct Sub { long long n; };" in result.stdout, result.stdout


# 6: the check's own errors are not blamed on the writer.
def test_the_checks_own_errors_name_what_to_fix_not_the_writer(run, tmp_path):
    source = "def write(path):\n    open(path, 'w').write('// text\\n')\n"
    tree = fixed_writer_tree(tmp_path, "plain", source, {"args.cuh": ("write", b"// \xff\xfe not text\n")})
    (tree / "sim" / "boom.py").write_text("raise RuntimeError('boom at import')\n")
    configure(tmp_path, {"src/sim/args.cuh": "sim.plain:write", "src/sim/a.cuh": "sim.plain:no_such_function",
                         "src/sim/b.cuh": "sim.no_such_module:write", "src/sim/c.cuh": "sim.boom:write"})
    result = run("check-signatures", tree)
    out = result.stdout
    assert result.returncode == 1
    assert "sim/args.cuh: error: the committed header is not UTF-8 text (byte 3 is not)" in out, out
    config = f'the struct-headers entry "{tree}/sim/a.cuh" = "sim.plain:no_such_function" in {tmp_path}/pyproject.toml'
    assert f"sim/a.cuh: error: module sim.plain has no no_such_function, the callable that {config}" in out, out
    assert "sim/b.cuh: error: module sim.no_such_module of its writer cannot be found (no module " \
           "sim.no_such_module)" in out and "fix the module name in the struct-headers entry" in out, out
    assert "sim/c.cuh: error: module sim.boom of its writer sim.boom:write cannot be imported; it raised " \
           "RuntimeError: boom at import" in out, out
    assert "its writer sim.plain:write raised" not in out and "UnicodeDecodeError" not in out
    assert "AttributeError" not in out and "ModuleNotFoundError" not in out
    # A header outside the tree: the configuration's line names it.
    configure(tmp_path, {"../outside.cuh": "sim.plain:write"})
    outside = run("check-signatures", tree)
    assert outside.returncode != 0
    assert f"{tmp_path}/pyproject.toml:" in outside.stderr and "../outside.cuh: the header is outside the tree" \
        in outside.stderr, outside.stderr
    # Nor a folder (the key "" included), nor a link that leads out of the tree: each is the configuration's error.
    elsewhere = Path(tempfile.mkdtemp()) / "elsewhere.cuh"
    elsewhere.write_text("// not in the tree\n")
    (tree / "sim" / "linked.cuh").symlink_to(elsewhere)
    for header, says in [("src/sim", "src/sim: is a folder; name the header file its writer writes"),
                         ("", ": is a folder"),
                         ("src/sim/linked.cuh", f"src/sim/linked.cuh: a symbolic link to {elsewhere}, outside the tree")]:
        configure(tmp_path, {header: "sim.plain:write"})
        refused = run("check-signatures", tree)
        assert refused.returncode == 2 and f"{tmp_path}/pyproject.toml:" in refused.stderr, refused.stderr
        assert says in refused.stderr, refused.stderr


# 7: a writer that changes folder writes where asked; the JSON summary counts the headers.
CHDIR_WRITER = '''
import os, tempfile

def write(path):
    os.chdir(tempfile.gettempdir())
    with open(path, "w") as f:
        f.write("struct Args { double x; };\\n")
'''


def test_a_writer_that_changes_folder_and_the_json_summary(run, tmp_path):
    tree = fixed_writer_tree(tmp_path, "moving", CHDIR_WRITER, {"args.cuh": ("write", "struct Args { double x; };\n"),
                                                                 "other.cuh": ("write", "// stale\n")})
    report = json.loads(run("check-signatures", "--format", "json", tree).stdout)
    assert report["summary"]["struct_headers"] == 2 and report["summary"]["struct_header_findings"] == 1, report
    assert [f["header"].endswith("other.cuh") for f in report["struct_headers"]] == [True]
    configure(tmp_path, {"src/sim/args.cuh": "sim.moving:write"})
    result = run("check-signatures", tree)
    assert result.returncode == 0, result.stdout + result.stderr
    text = run("check-signatures", "--format", "json", tree).stdout
    assert json.loads(text)["summary"]["struct_headers"] == 1


# What a writer reads from installed packages counts: in a virtual environment, site-packages lies
# inside the folder of the standard library, which is not tracked.
def test_a_warm_check_reruns_a_writer_when_an_installed_package_it_imports_changes(run, tmp_path):
    import subprocess
    venv = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", venv], check=True)
    site = Path(subprocess.run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "fieldwidth.py").write_text('WIDTH = "int"\n')
    writer = 'import fieldwidth\n\ndef write(path):\n    open(path, "w").write("struct Sp { %s n; };\\n" % fieldwidth.WIDTH)\n'
    tree = fixed_writer_tree(tmp_path, "installed", writer, {"sp.cuh": ("write", "struct Sp { int n; };\n")},
                             python=venv / "bin" / "python")
    time.sleep(2.1)  # past the record's racy margin
    (run.home / ".cache" / "cunumpy-kernels").mkdir(parents=True)
    assert run("check-signatures", tree).returncode == 0
    assert run("check-signatures", tree).returncode == 0  # warm
    (site / "fieldwidth.py").write_text('WIDTH = "long long"\n')
    result = run("check-signatures", tree)
    assert result.returncode == 1, result.stdout
    assert "+struct Sp { long long n; };" in result.stdout
