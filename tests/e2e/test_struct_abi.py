"""The struct ABI checked without a GPU: committed struct headers against the Python
that writes them (check-signatures, status), and every built cubin's parameter layout
against what the runtime packs (build, status)."""

import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from conftest import PYTHON, jobs_by_state

WRITER = '''
from cunumpy.arguments import CudaStruct, write_cuda_header

FIELDS = [("x", "double*"), ("n", "long long"), ("scale", "float")]


def write_args_header(path):
    return write_cuda_header(path, [CudaStruct("Args", FIELDS)], guard="SIM_ARGS_CUH")


def broken_writer(path):
    raise ValueError("field 'y' has no C type")


def writes_the_committed_header(path):
    write_cuda_header("sim/args.cuh", [CudaStruct("Args", FIELDS + [("extra", "int")])], guard="SIM_ARGS_CUH")


def replaces_the_committed_header(path):
    import os
    with open(path + ".new", "w") as new:
        new.write("struct Args { int changed; };\\n")
    os.replace(path + ".new", os.path.join(os.path.dirname(__file__), "args.cuh"))


def write_namespaced_header(path):
    with open(path, "w") as header:
        header.write("#pragma once\\nnamespace sim { struct Args { double* x; long long n; float scale; }; }\\n")
'''

KERNEL_WITH_HEADER = '''#include "../../args.cuh"
extern "C" __global__ void push(Args a, double dt)
{ if (threadIdx.x < a.n) a.x[threadIdx.x] += dt * a.scale; }
'''

# The struct the kernel compiles is its own copy, which has drifted from the header.
KERNEL_WITH_OWN_COPY = '''struct Args { double* x; long long n; float scale; double extra; };
extern "C" __global__ void push(Args a, double dt)
{ if (threadIdx.x < a.n) a.x[threadIdx.x] += dt * a.scale + a.extra; }
'''


def struct_tree(root: Path, kernel: str, writer: str = "sim.cuda_arguments:write_args_header", python=PYTHON) -> Path:
    """A src/ layout: package `sim` with its struct header src/sim/args.cuh, written by
    `sim.cuda_arguments`, and one kernel `push` taking the struct by value."""
    folder = root / "src" / "sim" / "kernels" / "push"
    folder.mkdir(parents=True)
    for package in (root / "src" / "sim", root / "src" / "sim" / "kernels"):
        (package / "__init__.py").write_text("")
    (root / "src" / "sim" / "cuda_arguments.py").write_text(WRITER)
    (folder / "push_kernels.py").write_text("def push(a: 'Args', dt: float):\n    pass\n")
    (folder / "push_cuda.cu").write_text(kernel)
    (root / "pyproject.toml").write_text(textwrap.dedent(f'''
        [tool.cunumpy-kernels]
        python = "{python}"
        arch = ["sm_90"]
        ptx = false

        [tool.cunumpy-kernels.struct-headers]
        "src/sim/args.cuh" = "{writer}"
    '''))
    write_header(root)
    return root / "src"


def write_header(root: Path):
    subprocess.run([PYTHON, "-c", "from sim.cuda_arguments import write_args_header; write_args_header('sim/args.cuh')"],
                   cwd=root / "src", check=True)


def header_findings(run, tree, check=None):
    report, result = run.json("status", "--only", "cuda", "--cache-dir", tree.parent / "cache", tree)
    if check is not None:
        assert result.returncode == check, result.stderr
    return report["struct_headers"]


def check_signatures(run, tree):
    return run("check-signatures", tree)


def test_a_header_its_writer_writes_passes_check_signatures_and_status(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_HEADER)
    result = check_signatures(run, tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert header_findings(run, tree) == []


def test_a_cuda_struct_edited_in_python_fails_with_a_diff_and_the_command_that_regenerates(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_HEADER)
    module = tree / "sim" / "cuda_arguments.py"
    edits = {
        "a field's type": ('("n", "long long")', '("n", "int")', ["-    long long n;", "+    int n;"], 7),
        "the order": ('("x", "double*"), ("n", "long long")', '("n", "long long"), ("x", "double*")',
                      ["-    long long n;", "+    long long n;"], 6),  # difflib keeps x and moves n
        "a new field": ('("scale", "float")]', '("scale", "float"), ("count", "int")]', ["+    int count;"], 9),
    }
    for what, (old, new, lines, first_changed) in edits.items():
        module.write_text(WRITER.replace(old, new))
        result = check_signatures(run, tree)
        assert result.returncode == 1, (what, result.stdout, result.stderr)
        assert "args.cuh: error: differs from what sim.cuda_arguments:write_args_header writes" in result.stdout, what
        assert "--- sim/args.cuh (committed)" in result.stdout and "+++ sim/args.cuh (as" in result.stdout
        for line in lines:
            assert line in result.stdout.splitlines(), (what, line, result.stdout)
        assert "regenerate it: cd " + str(tree) + " && " in result.stdout
        assert "from sim.cuda_arguments import write_args_header; write_args_header(\"sim/args.cuh\")" in result.stdout
        findings = header_findings(run, tree)
        assert [f["problem"] for f in findings] == ["differs from what sim.cuda_arguments:write_args_header writes"]
        assert findings[0]["line"] == first_changed, (what, findings[0]["diff"])
        github = run("check-signatures", "--format", "github", tree).stdout
        assert f"args.cuh,line={first_changed}::" in github, (what, github)
    status = run("status", "--only", "cuda", "--check-signatures", "--cache-dir", tmp_path / "cache", tree)
    assert status.returncode == 1
    assert "1 struct header is not what their writers write" in status.stderr + status.stdout
    assert "+    int count;" in status.stdout


def test_a_header_edited_by_hand_or_missing_fails(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_HEADER)
    header = tree / "sim" / "args.cuh"
    header.write_text(header.read_text().replace("float scale;", "double scale;"))
    result = check_signatures(run, tree)
    assert result.returncode == 1
    assert "-    double scale;" in result.stdout.splitlines() and "+    float scale;" in result.stdout.splitlines()
    header.unlink()
    result = check_signatures(run, tree)
    assert result.returncode == 1
    assert "args.cuh: error: does not exist; sim.cuda_arguments:write_args_header writes it" in result.stdout


def test_a_writer_that_raises_is_reported_with_its_last_traceback_line(run, tmp_path):
    # A writer that cannot be called is the configuration's fault, not the writer's
    # (test_struct_header_trial.py has every such case).
    for writer, message in [
        ("sim.cuda_arguments:broken_writer", "its writer sim.cuda_arguments:broken_writer raised ValueError: "
                                             "field 'y' has no C type"),
        ("sim.cuda_arguments:no_such_writer", "module sim.cuda_arguments has no no_such_writer, the callable that "
                                              "the struct-headers entry"),
        ("sim.no_such_module:write", "module sim.no_such_module of its writer cannot be found (no module "
                                     "sim.no_such_module)"),
    ]:
        root = tmp_path / writer.replace(":", "_")
        tree = struct_tree(root, KERNEL_WITH_HEADER, writer=writer)
        result = check_signatures(run, tree)
        assert result.returncode == 1, result.stdout
        assert f"args.cuh: error: {message}" in result.stdout, result.stdout


def test_a_warm_check_starts_no_python_until_a_module_the_writer_imports_changes(run, tmp_path):
    log = tmp_path / "python.log"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {PYTHON} "$@"\n')
    wrapper.chmod(0o755)
    tree = struct_tree(tmp_path / "t", KERNEL_WITH_HEADER, python=wrapper)
    # The records of source digests: check-signatures' in the home folder's cache (made when
    # missing), status's in its cache root, which only a build creates.
    (tree.parent / "cache").mkdir()
    def runs():  # the writers' runs; the Python may also be asked cunumpy's version
        return sum("request.json" in line for line in log.read_text().splitlines()) if log.exists() else 0

    assert check_signatures(run, tree).returncode == 0
    first = runs()
    assert first >= 1
    assert check_signatures(run, tree).returncode == 0
    assert runs() == first  # warm: nothing changed
    assert header_findings(run, tree) == []  # status's own record: one run, then warm
    assert header_findings(run, tree) == []
    assert runs() == first + 1
    first += 1
    time.sleep(2.1)  # past the record's racy margin, so that the edit is seen by its times
    module = tree / "sim" / "cuda_arguments.py"
    module.write_text(WRITER + "\n# a comment\n")
    assert check_signatures(run, tree).returncode == 0
    assert runs() == first + 1
    assert check_signatures(run, tree).returncode == 0
    assert runs() == first + 1  # warm again: the pass is remembered with the edited module
    module.write_text(WRITER.replace('"float"', '"double"'))
    assert check_signatures(run, tree).returncode == 1
    assert runs() == first + 2


def test_build_and_status_pass_cubins_that_lay_the_struct_out_as_the_header_does(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_HEADER)
    report, result = run.json("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
    assert result.returncode == 0, [job["log"] for job in report["jobs"]]
    assert len(jobs_by_state(report, "built")) == 1
    status, _ = run.json("status", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
    assert [a["state"] for k in status["kernels"] for a in k["artifacts"]] == ["built"]


def test_a_cubin_whose_struct_differs_from_the_configured_header_fails_build_naming_both_layouts(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_OWN_COPY)
    report, result = run.json("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
    assert result.returncode == 1
    [job] = report["jobs"]
    assert job["state"] == "failed"
    assert "push.sm_90.cubin of " in job["log"]
    assert "check 'parameter layout' failed: kernel 'push': argument 0 (Args a): the cubin has offset 0, 32 bytes, " \
           "the runtime packs offset 0, 24 bytes" in job["log"], job["log"]
    assert not list((tmp_path / "cache").glob("cuda/*/*/*.cubin"))  # nothing published


@pytest.mark.parametrize("spelling", ["sim::Args", "::sim::Args"])
def test_a_namespaced_struct_is_checked_by_its_qualified_name(run, tmp_path, spelling):
    kernel = ("namespace sim { struct Args { double* x; long long n; float scale; double extra; }; }\n"
              f'extern "C" __global__ void push({spelling} a, double dt)\n'
              "{ if (threadIdx.x < a.n) a.x[threadIdx.x] += dt * a.scale + a.extra; }\n")
    tree = struct_tree(tmp_path, kernel, writer="sim.cuda_arguments:write_namespaced_header")
    subprocess.run([PYTHON, "-c", "from sim.cuda_arguments import write_namespaced_header as w; w('sim/args.cuh')"],
                   cwd=tree, check=True)
    assert check_signatures(run, tree).returncode == 0
    report, result = run.json("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
    assert result.returncode == 1
    [job] = report["jobs"]
    assert "the cubin has offset 0, 32 bytes, the runtime packs offset 0, 24 bytes" in job["log"], job["log"]


def test_status_fails_a_cached_cubin_once_the_header_it_was_not_built_from_changes(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_HEADER.replace('#include "../../args.cuh"\n',
                                                            "struct Args { double* x; long long n; float scale; };\n"))
    report, result = run.json("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
    assert result.returncode == 0, [job["log"] for job in report["jobs"]]
    module = tree / "sim" / "cuda_arguments.py"
    module.write_text(WRITER.replace('("scale", "float")]', '("scale", "float"), ("extra", "double")]'))
    write_header(tmp_path)
    status, result = run.json("status", "--only", "cuda", "--require-built", "--cache-dir", tmp_path / "cache", tree)
    assert result.returncode == 1
    [artifact] = [a for k in status["kernels"] for a in k["artifacts"]]
    assert artifact["state"] == "failed"
    assert "the cubin has offset 0, 24 bytes, the runtime packs offset 0, 32 bytes" in artifact["reason"], artifact


OWN_COPY = "struct Args { double* x; long long n; float scale; };\n"


def test_every_command_that_reads_a_cached_cubin_fails_it_once_the_struct_headers_layout_changes(run, tmp_path):
    """The kernel compiles its own copy of the struct, so its key does not change with the
    header: a hit is checked as a fresh compile is, by build and status alike."""
    module_text = {
        "a new field": WRITER.replace('("scale", "float")]', '("scale", "float"), ("extra", "double")]'),
        "a field removed": WRITER.replace(', ("scale", "float")]', "]"),
        "a field narrowed": WRITER.replace('("n", "long long")', '("n", "int")'),
    }
    for what, text in module_text.items():
        root = tmp_path / what.replace(" ", "_")
        tree = struct_tree(root, KERNEL_WITH_HEADER.replace('#include "../../args.cuh"\n', OWN_COPY))
        cache = root / "cache"
        report, result = run.json("build", "--only", "cuda", "--cache-dir", cache, tree)
        assert result.returncode == 0, [job["log"] for job in report["jobs"]]
        report, result = run.json("build", "--only", "cuda", "--cache-dir", cache, tree)
        assert result.returncode == 0 and len(jobs_by_state(report, "hit")) == 1  # agreeing hits pass
        (tree / "sim" / "cuda_arguments.py").write_text(text)
        write_header(root)
        assert run("check-signatures", tree).returncode == 0  # the header is what its writer writes
        for _ in range(2):  # cold, then from the record
            report, result = run.json("build", "--only", "cuda", "--cache-dir", cache, tree)
            assert result.returncode == 1, what
            [job] = report["jobs"]
            assert job["state"] == "failed" and "check 'parameter layout' failed: kernel 'push'" in job["log"], job
        for gates in [[], ["--check-signatures"], ["--require-built"]]:
            status = run("status", "--only", "cuda", *gates, "--cache-dir", cache, tree)
            assert status.returncode == 1, (what, gates, status.stdout)
            assert "parameter layout: 1 cubin lays out the parameters otherwise than the runtime packs them" \
                   in status.stderr, status.stderr


# A struct passed by value that no configured header defines is checked by nothing: check-signatures
# says so, once per struct, naming the kernels, and --warnings-as-errors fails on it.
KERNEL_WITH_UNLISTED_STRUCTS = '''#include "../../args.cuh"
struct Grid { double* cells; int n; };
namespace sim { struct Field { float* values; }; }
extern "C" __global__ void push(Args a, Grid g, sim::Field f, Grid again, double dt)
{ if (threadIdx.x < a.n) a.x[threadIdx.x] += dt * a.scale + g.cells[0] + f.values[0] + again.n; }
'''


def test_a_struct_no_configured_header_defines_is_named_by_check_signatures(run, tmp_path):
    tree = struct_tree(tmp_path, KERNEL_WITH_UNLISTED_STRUCTS)
    (tree / "sim" / "kernels" / "push" / "push_kernels.py").write_text(
        "def push(a: 'Args', g: 'Grid', f: 'Field', again: 'Grid', dt: float):\n    pass\n")
    result = run("check-signatures", tree)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if "no header in struct-headers defines it" in line]
    assert len(lines) == 2, result.stderr  # Grid once, though taken twice; Field; never Args
    grid, field = sorted(lines)
    assert "push_cuda.cu: struct Grid is passed by value to 1 kernel (sim.kernels.push)" in grid, grid
    assert "struct sim::Field" in field, field
    assert "add the header that defines it, with its writer, to struct-headers" in grid
    assert not any("struct Args" in line for line in lines)
    strict = run("check-signatures", "--warnings-as-errors", tree)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    github = run("check-signatures", "--format", "github", tree)
    assert "::warning file=" in github.stdout and "struct Grid" in github.stdout, github.stdout


# A writer that ignores its argument and writes the committed header itself, by a relative path or
# by renaming over it, is refused before the header changes, and named.
@pytest.mark.parametrize("writer", ["writes_the_committed_header", "replaces_the_committed_header"])
def test_a_writer_that_would_change_the_committed_header_is_refused_and_named(run, tmp_path, writer):
    tree = struct_tree(tmp_path, KERNEL_WITH_HEADER, writer=f"sim.cuda_arguments:{writer}")
    header = tree / "sim" / "args.cuh"
    before = header.read_bytes()
    result = run("check-signatures", tree)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"its writer sim.cuda_arguments:{writer} tried to change the committed header itself" in result.stdout
    assert "make the writer write to its argument" in result.stdout
    assert header.read_bytes() == before
    status = run("status", "--only", "cuda", "--check-signatures", "--cache-dir", tmp_path / "cache", tree)
    assert status.returncode == 1 and header.read_bytes() == before, status.stdout + status.stderr
