"""`cunumpy-kernels check-signatures` on the example package, checked against cunumpy's own check."""

import json
import os
import re
import subprocess
import time
from pathlib import Path

from conftest import PYTHON
PUSH_CUDA = "particles/kernels/push/push_cuda.cu"
PUSH_HOST = "particles/kernels/push/push_kernels.py"
DEPOSIT_CUDA = "particles/kernels/deposit/deposit_cuda.cu"


def swap_in_file(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def line_of(path, needle):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def cunumpy_problems(src):
    """The problems cunumpy's own KernelCatalog.check_signatures lists."""
    script = (
        "from particles.kernels import catalog\n"
        "try:\n    catalog.check_signatures()\nexcept ValueError as e:\n    print(str(e))\n"
    )
    result = subprocess.run([PYTHON, "-c", script], cwd=src, capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(src)), timeout=120)
    assert result.returncode == 0, result.stderr
    return [line.strip() for line in result.stdout.splitlines()[1:] if line.strip()]


def test_the_example_package_agrees(run, example):
    result = run("check-signatures", example, check=0)
    assert result.stdout == ""
    assert "3 kernels, 2 with more than one implementation: all agree" in result.stderr
    one = run("check-signatures", example / "particles" / "kernels" / "push", check=0)
    assert "check-signatures: 1 kernel, 1 with more than one implementation: all agree" in one.stderr


def test_a_mismatch_names_both_declarations_as_cunumpy_words_it(run, example):
    swap_in_file(example / PUSH_CUDA, "push(double* x, double* v,", "push(double* v, double* x,")
    result = run("check-signatures", example, cwd=example, check=1)
    cuda_line = line_of(example / PUSH_CUDA, "void push(")
    host_line = line_of(example / PUSH_HOST, "def push(")
    message = "kernel 'push': the host kernel takes (x, v, e, dt, length, n), the CUDA kernel (v, x, e, dt, length, n)"
    assert result.stdout.splitlines() == [
        f"{PUSH_CUDA}:{cuda_line}: error: {message}",
        f"{PUSH_HOST}:{host_line}: note: the host kernel is declared here",
    ]
    assert cunumpy_problems(example) == [message]


def test_every_mismatch_is_listed_not_just_the_first(run, example):
    swap_in_file(example / PUSH_CUDA, "double dt, double length", "double length, double dt")
    swap_in_file(example / DEPOSIT_CUDA, "double* rho,", "double* density,")
    result = run("check-signatures", "--format", "json", example, check=1)
    report = json.loads(result.stdout)
    messages = [f["message"] for f in report["findings"]]
    assert messages == [
        "kernel 'deposit': the host kernel takes (x, w, rho, dx, n, n_cells), the CUDA kernel (x, w, density, dx, n, n_cells)",
        "kernel 'push': the host kernel takes (x, v, e, dt, length, n), the CUDA kernel (x, v, e, length, dt, n)",
    ]
    assert report["summary"] == {"kernels": 3, "match": 0, "mismatch": 2, "unreadable": 0, "nothing_to_compare": 1,
                                 "warnings": 0, "struct_headers": 0, "struct_header_findings": 0}
    push = report["findings"][1]["declarations"]
    assert [d["role"] for d in push] == ["host kernel", "CUDA kernel"]
    assert push[1]["line"] == line_of(example / PUSH_CUDA, "void push(")
    assert cunumpy_problems(example) == messages


def test_github_format_annotates_both_files(run, example):
    swap_in_file(example / PUSH_CUDA, "push(double* x, double* v,", "push(double* v, double* x,")
    result = run("check-signatures", "--format", "github", ".", cwd=example, check=1)
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    cuda_line = line_of(example / PUSH_CUDA, "void push(")
    assert lines[0].startswith(f"::error file={PUSH_HOST},line=")
    assert lines[1].startswith(f"::error file={PUSH_CUDA},line={cuda_line},title=kernel push%3A CUDA kernel::")
    assert lines[1].endswith("the CUDA kernel (v, x, e, dt, length, n)")


def test_files_stand_for_their_kernels_as_pre_commit_passes_them(run, example):
    swap_in_file(example / PUSH_CUDA, "push(double* x, double* v,", "push(double* v, double* x,")
    # deposit's files only: push's mismatch is not in scope
    run("check-signatures", DEPOSIT_CUDA, "particles/kernels/deposit/deposit_kernels.py", "particles/__init__.py",
        cwd=example, check=0)
    result = run("check-signatures", "particles/kernels/common.cuh", PUSH_HOST, cwd=example, check=1)
    assert "kernel 'push'" in result.stdout


def test_a_path_the_commit_deletes_is_skipped_with_a_note_and_the_rest_checked(run, example):
    swap_in_file(example / PUSH_CUDA, "push(double* x, double* v,", "push(double* v, double* x,")
    result = run("check-signatures", "particles/kernels/gone/gone_kernels.py", cwd=example, check=0)
    assert "particles/kernels/gone/gone_kernels.py does not exist (deleted or renamed): skipped" in result.stderr
    result = run("check-signatures", "particles/kernels/gone_kernels.py", PUSH_HOST, cwd=example, check=1)
    assert "gone_kernels.py does not exist" in result.stderr
    assert "kernel 'push'" in result.stdout


def test_each_path_is_read_with_its_nearest_pyproject(run, tmp_path):
    # A monorepo: package b names its host modules *_host.py, package a keeps the default.
    for name, suffix in [("a", None), ("b", "_host")]:
        root = tmp_path / name
        kernel = root / "src" / name / "scale"
        kernel.mkdir(parents=True)
        (root / "src" / name / "__init__.py").write_text("")
        host = f"scale{suffix or '_kernels'}.py"
        (kernel / host).write_text("def scale(x: 'float[:]', a: float, n: int):\n    pass\n")
        cuda_names = "x, a, n" if name == "a" else "x, n, a"
        (kernel / "scale_cuda.cu").write_text(
            'extern "C" __global__ void scale(' + ", ".join(
                {"x": "double* x", "a": "double a", "n": "int n"}[p] for p in cuda_names.split(", ")) + ") {}\n")
        pyproject = "[project]\nname = '" + name + "'\n"
        if suffix:
            pyproject += f"[tool.cunumpy-kernels]\nhost-suffix = '{suffix}'\n"
        (root / "pyproject.toml").write_text(pyproject)
    result = run("check-signatures", "a/src/a/scale/scale_kernels.py", "b/src/b/scale/scale_host.py",
                 cwd=tmp_path, check=1)
    assert "b/src/b/scale/scale_cuda.cu" in result.stdout
    assert "kernel 'scale': the host kernel takes (x, a, n), the CUDA kernel (x, n, a)" in result.stdout
    assert "a/src/a" not in result.stdout
    assert "2 kernels" in result.stderr


def test_github_format_names_files_relative_to_the_workspace(run, example):
    swap_in_file(example / PUSH_CUDA, "push(double* x, double* v,", "push(double* v, double* x,")
    workspace = example.parent
    result = run("check-signatures", "--format", "github", ".", cwd=example, check=1,
                 env={"GITHUB_WORKSPACE": str(workspace)})
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"::error file=src/{PUSH_HOST},line=")
    assert lines[1].startswith(f"::error file=src/{PUSH_CUDA},line=")


def test_an_unreadable_declaration_is_reported_with_its_reason(run, example):
    cuda = example / PUSH_CUDA
    text = cuda.read_text()
    declaration = re.search(r'extern "C" __global__ void push\(([^)]*)\)', text)
    cuda.write_text(text.replace(declaration.group(0),
                                 "#define KERNEL(name) extern \"C\" __global__ void name(" + declaration.group(1).replace("\n", " ") + ")\n"
                                 "KERNEL(push)"))
    result = run("check-signatures", example, cwd=example, check=1)
    assert re.search(r"push_cuda\.cu:\d+: error: kernel 'push': cannot read the CUDA kernel: 'push' is declared by "
                     r"the function-like macro KERNEL \(defined at line \d+\)", result.stdout), result.stdout
    assert "1 cannot be read" in result.stderr


def test_usage_errors_exit_2(run, example):
    run("check-signatures", "--format", "xml", example, check=2)


def test_a_kernel_macro_from_a_project_header_is_read(run, tmp_path):
    # `#define KERNEL extern "C" __global__` in a header of the source root, and
    # one in a configured include folder: both read as `build` finds them.
    root = tmp_path / "tree"
    folder = root / "pkg" / "kernels" / "push"
    folder.mkdir(parents=True)
    for package in (root / "pkg", root / "pkg" / "kernels"):
        (package / "__init__.py").write_text("")
    (root / "pkg" / "common.cuh").write_text('#pragma once\n#include "qualifiers.cuh"\n#define KERNEL EXTERN_C __global__\n')
    (root / "include").mkdir()
    (root / "include" / "qualifiers.cuh").write_text('#define EXTERN_C extern "C"\n#define RESTRICT __restrict__\n')
    (root / "pyproject.toml").write_text('[tool.cunumpy-kernels]\ninclude-dirs = ["include"]\n')
    (folder / "push_kernels.py").write_text("def push(x, n):\n    pass\n")
    (folder / "push_cuda.cu").write_text('#include "pkg/common.cuh"\nKERNEL void push(double* RESTRICT x, int n) {}\n')
    report = json.loads(run("check-signatures", "--format", "json", root / "pkg", check=0).stdout)
    assert report["kernels"][0]["agreement"] == "match"
    assert report["kernels"][0]["declarations"][1]["parameters"] == ["x", "n"]
    # cunumpy itself does not expand it: a warning, not an error.
    assert [f["kind"] for f in report["findings"]] == ["cunumpy-unreadable"]
    (folder / "push_kernels.py").write_text("def push(n, x):\n    pass\n")
    result = run("check-signatures", root / "pkg", cwd=root, check=1)
    assert "pkg/kernels/push/push_cuda.cu:2: error: kernel 'push': the host kernel takes (n, x), the CUDA kernel (x, n)" \
        in result.stdout


def test_a_prototype_with_other_names_does_not_count_once_the_definition_is_seen(run, example):
    cuda = example / PUSH_CUDA
    text = cuda.read_text()
    definition = text.index('extern "C"')
    cuda.write_text(text[:definition] + 'extern "C" __global__ void push(double* a, double* b, double* c, double d,'
                    " double e, long long f);\n" + text[definition:])
    report = json.loads(run("check-signatures", "--format", "json", example, check=0).stdout)
    push = next(k for k in report["kernels"] if k["kernel"] == "push")
    assert push["agreement"] == "match"
    # cunumpy reads the prototype first and would compare its names: said as a warning.
    (warning,) = [f for f in report["findings"] if f["kernel"] == "push"]
    assert warning["kind"] == "cunumpy-mismatch" and warning["severity"] == "warning"
    assert "takes (a, b, c, d, e, f), not (x, v, e, dt, length, n)" in warning["message"]


def test_a_header_path_stands_for_the_kernels_that_include_it_and_only_those(run, tmp_path):
    src = tmp_path / "src"
    kernels = src / "hdr" / "kernels"
    for init in (src / "hdr", kernels):
        init.mkdir(parents=True, exist_ok=True)
        (init / "__init__.py").write_text("")
    (kernels / "args.cuh").write_text('#include "inner.cuh"\n')
    (kernels / "inner.cuh").write_text("#define PUSH_ARGS double* x, int m\n")
    for name, cuda in (("push", '#include "hdr/kernels/args.cuh"\nextern "C" __global__ void push(PUSH_ARGS) {}\n'),
                       ("other", 'extern "C" __global__ void other(double* y, int k) {}\n')):
        (kernels / name).mkdir()
        (kernels / name / f"{name}_kernels.py").write_text(f"def {name}(x, n):\n    pass\n")
        (kernels / name / f"{name}_cuda.cu").write_text(cuda)
    # inner.cuh reaches push through args.cuh; `other` disagrees too but does not include it.
    result = run("check-signatures", "--format", "json", kernels / "inner.cuh", cwd=tmp_path, check=1)
    report = json.loads(result.stdout)
    assert [k["kernel"] for k in report["kernels"]] == ["push"]
    errors = [f["message"] for f in report["findings"] if f["severity"] == "error"]
    assert errors == ["kernel 'push': the host kernel takes (x, n), the CUDA kernel (x, m)"]


def test_a_module_found_in_two_trees_is_named_not_dropped_silently(run, tmp_path):
    for tree in ("s1", "s2"):
        kernel = tmp_path / tree / "pkg" / "k"
        kernel.mkdir(parents=True)
        (tmp_path / tree / "pkg" / "__init__.py").write_text("")
        (kernel / "k_kernels.py").write_text("def k(x: 'float[:]', n: int):\n    pass\n")
    (tmp_path / "s2" / "pkg" / "k" / "k_cuda.cu").write_text('extern "C" __global__ void k(int n, double* x) {}\n')
    expected = (f"{tmp_path}/s2/pkg/k: kernel module 'pkg.k' was found already in {tmp_path}/s1/pkg/k; "
                "this one is left out")
    for command in (["check-signatures"], ["status", "--only", "host", "--cache-dir", tmp_path / "cache"]):
        result = run(*command, "s1", "s2", cwd=tmp_path, check=0)
        assert expected in result.stderr
    # Files, as pre-commit passes them, name it too; one kernel named by its folder and its file does not.
    result = run("check-signatures", "s1/pkg/k/k_kernels.py", "s2/pkg/k/k_cuda.cu", cwd=tmp_path, check=0)
    assert "kernel module 'pkg.k' was found already in" in result.stderr
    result = run("check-signatures", "s2", "s2/pkg/k/k_cuda.cu", cwd=tmp_path, check=1)
    assert "was found already" not in result.stderr
    (tmp_path / "s1link").symlink_to(tmp_path / "s1")  # the same kernel through a link
    result = run("check-signatures", "s1/pkg/k/k_kernels.py", "s1link/pkg/k/k_kernels.py", cwd=tmp_path, check=0)
    assert "was found already" not in result.stderr
    # Each tree alone is walked whole.
    assert "the host kernel takes (x, n), the CUDA kernel (n, x)" in run("check-signatures", "s2", cwd=tmp_path,
                                                                           check=1).stdout


def test_folders_that_are_not_kernels_are_named_in_full_once_then_in_one_line(run, example):
    """Struphy's tree has six such folders: the same paragraph on every command hid the warnings that were new."""
    kernels = example / "particles" / "kernels"
    for name in ("cuboid", "torus"):  # Struphy's geometry/domains have this form
        (kernels / name).mkdir()
        (kernels / name / f"{name}_kernels.py").write_text("def evaluate(x):\n    pass\n")
    # The record of source digests remembers it, for files older than its 2 s change-time margin; in
    # ~/.cache, made when missing (a CI job's fresh HOME has none).
    assert not (Path(run.env["HOME"]) / ".cache").exists()
    time.sleep(2.1)
    first = run("check-signatures", example, check=0).stderr
    assert "2 folders are not kernels" in first and "cuboid/cuboid_kernels.py (no 'cuboid')" in first
    second = run("check-signatures", example, check=0).stderr
    [line] = [line for line in second.splitlines() if "not kernels" in line]
    assert line.endswith(f"{kernels}: 2 folders are not kernels, as named in full on an earlier run (the list "
                         "changes: named again); list them in the not-kernels key (cunumpy-kernels(5)) to drop this "
                         "line"), line
    assert "cuboid" not in second
    # Still a warning: --warnings-as-errors fails on it as it did on the full one.
    assert "1 warning" in run("check-signatures", "--warnings-as-errors", example, check=1).stderr
    # Another such folder: the list changed, named in full again.
    (kernels / "slab").mkdir()
    (kernels / "slab" / "slab_kernels.py").write_text("def evaluate(x):\n    pass\n")
    time.sleep(2.1)
    third = run("check-signatures", example, check=0).stderr
    assert "3 folders are not kernels" in third and "slab/slab_kernels.py (no 'slab')" in third
