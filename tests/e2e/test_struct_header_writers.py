"""How check-signatures and status run a struct header's writer: as the printed regenerate
command runs it (the same folder, sys.path and file name), each writer in its own process with
a time limit, a warm check that re-runs a writer when anything it read changes, and messages
that say what went wrong."""

import json
import subprocess
import textwrap
import time
from pathlib import Path

from conftest import PYTHON
from test_struct_abi import KERNEL_WITH_HEADER, WRITER, struct_tree

HEADER_FREE_KERNEL = '''struct Args { double* x; long long n; float scale; };
extern "C" __global__ void push(Args a, double dt) { if (threadIdx.x < a.n) a.x[threadIdx.x] += dt * a.scale; }
'''


def configure(root: Path, headers: dict, python=PYTHON, extra=""):
    """Rewrites root/pyproject.toml with these struct headers (path -> writer)."""
    lines = "\n".join(f'"{header}" = "{writer}"' for header, writer in headers.items())
    (root / "pyproject.toml").write_text(
        f'[tool.cunumpy-kernels]\npython = "{python}"\narch = ["sm_90"]\nptx = false\n{extra}\n'
        f"[tool.cunumpy-kernels.struct-headers]\n{lines}\n")


def regenerate_commands(result) -> list:
    return [line.split("regenerate it: ", 1)[1] for line in result.stdout.splitlines() if "regenerate it: " in line]


def regenerate_all(run, tree, cwd=None):
    """Runs every printed regenerate command with sh; the check passes afterwards."""
    result = run("check-signatures", tree, cwd=cwd)
    commands = regenerate_commands(result)
    assert commands, result.stdout + result.stderr
    for command in commands:
        subprocess.run(["sh", "-c", command], check=True, cwd="/")
    after = run("check-signatures", tree, cwd=cwd)
    assert after.returncode == 0, after.stdout + after.stderr
    return commands


# A1: the writer is called with a path of the header's own file name.
DEFAULT_GUARD_WRITERS = '''
import os
from cunumpy.arguments import CudaStruct, write_cuda_header
FIELDS = [("x", "double*"), ("n", "int")]

def default_guard(path):
    write_cuda_header(path, [CudaStruct("Args", FIELDS)])

def names_its_file(path):
    with open(path, "w") as f:
        f.write("// " + os.path.basename(path) + "\\nstruct Args { double* x; int n; };\\n")

def guard_from_stem(path):
    write_cuda_header(path, [CudaStruct("Args", FIELDS)], guard=os.path.splitext(os.path.basename(path))[0].upper())
'''


def test_a_writer_that_derives_text_from_the_file_name_passes_once_regenerated(run, tmp_path):
    for writer, header in [("default_guard", "src/sim/args.cuh"), ("names_its_file", "src/sim/pusher_args.cuh"),
                           ("guard_from_stem", "src/sim/spline_args.cuh")]:
        root = tmp_path / writer
        tree = struct_tree(root, HEADER_FREE_KERNEL)
        (tree / "sim" / "names.py").write_text(DEFAULT_GUARD_WRITERS)
        configure(root, {header: f"sim.names:{writer}"})
        subprocess.run(["sh", "-c", f"cd {tree} && {PYTHON} -c 'from sim.names import {writer}; {writer}(\"{header[4:]}\")'"],
                       check=True)
        result = run("check-signatures", tree)
        assert result.returncode == 0, (writer, result.stdout, result.stderr)
        (root / header).write_text("// stale\n")
        assert run("check-signatures", tree).returncode == 1
        regenerate_all(run, tree)


# A2: the writer runs in the folder the regenerate command changes to, from any working folder.
RELATIVE_WRITERS = '''
import json
from cunumpy.arguments import CudaStruct, write_cuda_header

def from_json(path):
    fields = [tuple(f) for f in json.load(open("sim/fields.json"))]
    write_cuda_header(path, [CudaStruct("Args", fields)], guard="ARGS_CUH")

def from_sibling_module(path):
    import layout_helpers  # a module beside the package, found from the working folder
    write_cuda_header(path, [CudaStruct("Args", layout_helpers.FIELDS)], guard="ARGS_CUH")
'''


def test_the_check_runs_a_writer_in_the_regenerate_commands_folder_whatever_the_callers(run, tmp_path):
    for writer in ["from_json", "from_sibling_module"]:
        root = tmp_path / writer
        tree = struct_tree(root, HEADER_FREE_KERNEL)
        (tree / "sim" / "relative.py").write_text(RELATIVE_WRITERS)
        (tree / "sim" / "fields.json").write_text('[["x", "double*"], ["n", "int"]]')
        (tree / "layout_helpers.py").write_text('FIELDS = [("x", "double*"), ("n", "int")]\n')
        configure(root, {"src/sim/args.cuh": f"sim.relative:{writer}"})
        (tree / "sim" / "args.cuh").unlink()
        for cwd in [root, tree / "sim", Path("/")]:
            result = run("check-signatures", tree, cwd=cwd)
            assert result.returncode == 1 and "does not exist" in result.stdout, (writer, cwd, result.stdout)
        [command] = regenerate_all(run, tree, cwd=tree / "sim")
        assert command.startswith(f"cd {tree} && ")
        for cwd in [root, Path("/")]:
            assert run("check-signatures", tree, cwd=cwd).returncode == 0


# A3: sys.path comes from where the writer's package is, not from where the header is.
def test_a_header_outside_the_writers_package_is_checked_and_regenerated(run, tmp_path):
    for header in ["include/args.cuh", "args.cuh", "src/cuda_headers/args.cuh", "src/sim/kernels/push/args.cuh"]:
        root = tmp_path / header.replace("/", "_")
        tree = struct_tree(root, HEADER_FREE_KERNEL)
        (root / header).parent.mkdir(parents=True, exist_ok=True)
        configure(root, {header: "sim.cuda_arguments:write_args_header"})
        result = run("check-signatures", tree)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "does not exist; sim.cuda_arguments:write_args_header writes it" in result.stdout, result.stdout
        assert "ModuleNotFoundError" not in result.stdout
        [command] = regenerate_all(run, tree)
        assert command.startswith(f"cd {tree} && "), command
        assert (root / header).read_text().startswith("// Generated by cunumpy")


# B: every word of the regenerate command is quoted for sh.
def test_the_regenerate_command_is_quoted_for_the_shell(run, tmp_path):
    for name in ["my project", "it's", "$HOME and `x`", 'say "hi"', "a\\b;c&d"]:
        root = tmp_path / name
        bin_folder = root / "the python's bin"
        bin_folder.mkdir(parents=True)
        python = bin_folder / "python 3"
        python.write_text(f'#!/bin/sh\nexec {PYTHON} "$@"\n')
        python.chmod(0o755)
        tree = struct_tree(root, HEADER_FREE_KERNEL, python=str(python).replace("\\", "\\\\").replace('"', '\\"'))
        header = tree / "sim" / "args.cuh"
        header.write_text(header.read_text() + "// edited\n")
        commands = regenerate_all(run, tree)
        assert "// edited" not in header.read_text(), name
        assert len(commands) == 1


# C lives in test_struct_abi.py (the cubin side); D below needs both.
PARAMS_WRITERS = '''
from cunumpy.arguments import CudaStruct, write_cuda_header
def write_a(path):
    write_cuda_header(path, [CudaStruct("Params", [("a", "double")])], guard="A_CUH")
def write_b(path):
    write_cuda_header(path, [CudaStruct("Params", [("a", "double"), ("b", "double")])], guard="B_CUH")
def write_b_same(path):
    write_cuda_header(path, [CudaStruct("Params", [("a", "double")])], guard="B_CUH")
'''


def test_a_struct_two_headers_define_fails_every_command_naming_both(run, tmp_path):
    for second in ["write_b", "write_b_same"]:
        root = tmp_path / second
        tree = struct_tree(root, KERNEL_WITH_HEADER)
        (tree / "sim" / "params.py").write_text(PARAMS_WRITERS)
        configure(root, {"src/sim/args.cuh": "sim.cuda_arguments:write_args_header",
                         "src/sim/a.cuh": "sim.params:write_a", "src/sim/b.cuh": f"sim.params:{second}"})
        subprocess.run([PYTHON, "-c", f"from sim.params import *; write_a('sim/a.cuh'); {second}('sim/b.cuh')"],
                       cwd=tree, check=True)
        expected = f"struct Params is defined by both {tree}/sim/a.cuh and {tree}/sim/b.cuh"
        result = run("check-signatures", tree)
        assert result.returncode == 1 and expected in result.stdout, result.stdout
        status = run("status", "--only", "cuda", "--check-signatures", "--cache-dir", root / "cache", tree)
        assert status.returncode == 1 and expected in status.stdout, status.stdout + status.stderr
        report, build = run.json("build", "--only", "cuda", "--cache-dir", root / "cache", tree)
        assert build.returncode == 1
        assert all(expected in job["log"] for job in report["jobs"]), report["jobs"]


# E: a passed check holds only while everything the writer read reads the same.
WARM_WRITER = '''
import json, os
from cunumpy.arguments import CudaStruct, write_cuda_header
try:
    from sim.extra_fields import EXTRA
except ImportError:
    EXTRA = []
HERE = os.path.dirname(__file__)
FIELDS = [tuple(f) for f in json.load(open(os.path.join(HERE, "fields.json")))]
try:
    with open(os.path.join(HERE, "optional_fields.json")) as f:
        FIELDS += [tuple(x) for x in json.load(f)]
except FileNotFoundError:
    pass
def write(path):
    write_cuda_header(path, [CudaStruct("Args", FIELDS + EXTRA)], guard="ARGS_CUH")
'''


def writer_runs(log: Path) -> int:
    return sum("request.json" in line for line in log.read_text().splitlines()) if log.exists() else 0


def test_a_warm_check_reruns_a_writer_when_a_file_it_read_or_missed_changes(run, tmp_path):
    log = tmp_path / "python.log"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {PYTHON} "$@"\n')
    wrapper.chmod(0o755)
    root = tmp_path / "t"
    tree = struct_tree(root, HEADER_FREE_KERNEL, python=wrapper)
    (tree / "sim" / "warm.py").write_text(WARM_WRITER)
    fields = tree / "sim" / "fields.json"
    fields.write_text('[["x", "double*"], ["n", "int"]]')
    configure(root, {"src/sim/args.cuh": "sim.warm:write"}, python=wrapper)
    subprocess.run([PYTHON, "-c", "from sim.warm import write; write('sim/args.cuh')"], cwd=tree, check=True)
    (run.home / ".cache" / "cunumpy-kernels").mkdir(parents=True)
    assert run("check-signatures", tree).returncode == 0
    assert run("check-signatures", tree).returncode == 0
    assert writer_runs(log) == 1  # warm
    changes = [
        ("a data file it opened", lambda: fields.write_text('[["x", "double*"], ["n", "long long"]]'),
         lambda: fields.write_text('[["x", "double*"], ["n", "int"]]')),
        ("a module its failed import looked for", lambda: (tree / "sim" / "extra_fields.py").write_text('EXTRA = [("y", "double")]\n'),
         lambda: (tree / "sim" / "extra_fields.py").unlink()),
        ("a file it failed to open", lambda: (tree / "sim" / "optional_fields.json").write_text('[["z", "int"]]'),
         lambda: (tree / "sim" / "optional_fields.json").unlink()),
    ]
    runs = 1
    for what, change, undo in changes:
        time.sleep(2.1)  # past the record's racy margin, so that the edit is seen by its times
        change()
        result = run("check-signatures", tree)
        assert result.returncode == 1, (what, result.stdout)
        assert writer_runs(log) == runs + 1, what
        undo()
        assert run("check-signatures", tree).returncode == 0, what
        assert run("check-signatures", tree).returncode == 0, what
        runs = writer_runs(log)


# F: messages.
FAILING_WRITERS = '''
import os, sys, time
def multiline(path):
    raise ValueError("field 'q' has no C type\\n(see the struct definition)")
def forgets(path):
    pass
def hard_exit(path):
    os._exit(0)
def exits_3(path):
    os._exit(3)
def system_exit(path):
    sys.exit("no layout for you")
def hangs(path):
    time.sleep(600)
def blocks_in_c(path):
    os.read(os.pipe()[0], 1)
not_a_function = ["Args", "x"]
'''


def failing_tree(root: Path, writers: list, extra="") -> Path:
    tree = struct_tree(root, HEADER_FREE_KERNEL)
    (tree / "sim" / "failing.py").write_text(FAILING_WRITERS)
    headers = {"src/sim/args.cuh": "sim.cuda_arguments:write_args_header"}
    headers.update({f"src/sim/{w}.cuh": f"sim.failing:{w}" for w in writers})
    configure(root, headers, extra=extra)
    return tree


def test_a_failing_writer_is_reported_by_how_it_failed_and_the_others_are_still_checked(run, tmp_path):
    writers = ["multiline", "forgets", "hard_exit", "exits_3", "system_exit", "not_a_function"]
    tree = failing_tree(tmp_path, writers)
    (tree / "sim" / "args.cuh").write_text("// edited by hand\n")
    result = run("check-signatures", tree)
    assert result.returncode == 1
    out = result.stdout
    assert "its writer sim.failing:multiline raised ValueError: field 'q' has no C type\n(see the struct definition)\n" \
           f"  at {tree}/sim/failing.py:4 in multiline" in out, out
    assert "its writer sim.failing:forgets wrote nothing to the path it was given (" in out
    assert "forgets.cuh)" in out and "FileNotFoundError" not in out
    assert "its writer sim.failing:hard_exit ended its Python process (exit 0" in out
    assert "its writer sim.failing:exits_3 ended its Python process (exit 3" in out
    assert "its writer sim.failing:system_exit raised SystemExit: no layout for you" in out
    assert "sim.failing:not_a_function is a list, not a function: the struct-headers entry" in out, out
    assert "must name the function that writes the header" in out and "<string>" not in out
    assert "args.cuh: error: differs from what sim.cuda_arguments:write_args_header writes" in out  # still checked
    # The summary says what the exit status says.
    assert "signatures agree; 7 of 7 struct headers fail" in result.stderr and "all agree" not in result.stderr, \
        result.stderr


def test_a_writer_that_does_not_finish_is_stopped_at_the_configured_timeout(run, tmp_path):
    tree = failing_tree(tmp_path, ["hangs", "blocks_in_c"], extra="struct-header-timeout = 2")
    start = time.monotonic()
    result = run("check-signatures", tree)
    assert time.monotonic() - start < 30
    assert result.returncode == 1
    for writer in ["hangs", "blocks_in_c"]:
        assert f"its writer sim.failing:{writer} did not finish within 2 s and was stopped " \
               "(the struct-header-timeout key sets the limit)" in result.stdout, result.stdout
    assert "sim/args.cuh: error" not in result.stdout  # the others are checked all the same
    for bad in ["0", "-1", '"5"', "1.5"]:
        configure(tmp_path, {}, extra=f"struct-header-timeout = {bad}")
        broken = run("check-signatures", tree)
        assert broken.returncode != 0 and "struct-header-timeout" in broken.stderr, (bad, broken.stderr)


def test_a_missing_interpreter_is_one_error_naming_it_and_where_it_is_set(run, tmp_path):
    tree = struct_tree(tmp_path, HEADER_FREE_KERNEL)
    configure(tmp_path, {"src/sim/args.cuh": "sim.cuda_arguments:write_args_header",
                         "src/sim/other.cuh": "sim.cuda_arguments:write_args_header"})
    for args, python in [(["--python", "/no/python"], "/no/python"), ([], "/missing/bin/python3")]:
        if not args:
            configure(tmp_path, {"src/sim/args.cuh": "sim.cuda_arguments:write_args_header"}, python=python)
        result = run("check-signatures", *args, tree)
        assert result.returncode == 1, result.stdout
        message = f"the Python interpreter '{python}' that runs the header writers cannot be run"
        assert result.stderr.count(message) == 1 and "python key of [tool.cunumpy-kernels]" in result.stderr, \
            result.stderr
        assert "--python" in result.stderr and "regenerate it" not in result.stdout
        status = run("status", "--only", "cuda", "--check-signatures", *args, "--cache-dir", tmp_path / "c", tree)
        assert status.returncode == 1
        assert "regenerate it: \n" not in status.stdout and "regenerate it:" not in status.stdout
        assert f"--check-signatures: the struct headers cannot be checked: struct-headers: {message}" in status.stderr, \
            status.stderr


# G: a drift that keeps every size and offset passes the cubin check; the header check catches it.
def test_a_same_size_drift_passes_the_cubin_check_and_fails_the_header_check(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_HEADER)
    report, result = run.json("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
    assert result.returncode == 0, [job["log"] for job in report["jobs"]]
    module = tree / "sim" / "cuda_arguments.py"
    header = tree / "sim" / "args.cuh"
    committed = header.read_text()
    for what, edit in [("the writer: float to int", lambda: module.write_text(WRITER.replace('"float"', '"int"'))),
                       ("the header by hand: float to int", lambda: header.write_text(committed.replace("float scale", "int scale"))),
                       ("the header by hand: a field renamed", lambda: header.write_text(
                           committed.replace("long long n;\n    float scale;", "long long m;\n    float scale;")))]:
        edit()
        status = run("status", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
        assert "parameter layout" not in status.stdout + status.stderr, what  # inherent: sizes and offsets agree
        check = run("check-signatures", tree)
        assert check.returncode == 1 and "args.cuh: error: differs from what" in check.stdout, (what, check.stdout)
        module.write_text(WRITER)
        header.write_text(committed)
