"""Template kernels built as cunumpy builds them with `template_args`.

The entry of `template <typename T> __global__ void scale(...)` is the
instantiation `scale<T>`: its arguments come from `template-args` in
pyproject.toml or the source's one explicit instantiation. Both compilers
record the lowered name in the manifest, and the arguments are in the key.
"""

import json
from pathlib import Path

import pytest

from conftest import jobs_by_state

TEMPLATE = (
    "template <typename T>\n"
    "__global__ void scale(T* x, T factor, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] *= factor;\n"
    "}\n"
)
LOWERED = {"double": "_Z5scaleIdEvPT_S0_i", "float": "_Z5scaleIfEvPT_S0_i"}


def template_tree(root: Path, args=None, cuda=TEMPLATE) -> Path:
    table = "[tool.cunumpy-kernels]\n"
    if args is not None:
        table += "template-args = { scale = [" + ", ".join(f'"{a}"' for a in args) + "] }\n"
    (root / "pyproject.toml").parent.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(table)
    folder = root / "pkg" / "kernels" / "scale"
    folder.mkdir(parents=True, exist_ok=True)
    for package in (root / "pkg", root / "pkg" / "kernels"):
        (package / "__init__.py").write_text("")
    (folder / "scale_kernels.py").write_text("def scale(x: 'float[:]', factor: float, n: int):\n    pass\n")
    (folder / "scale_cuda.cu").write_text(cuda)
    return root


def build(run, tree, cache, compiler, *extra, check=0):
    return run.json("build", "--only", "cuda", "--compiler", compiler, "--arch", "sm_90", "--no-ptx",
                    "--cache-dir", cache, *extra, tree / "pkg", cwd=tree, check=check)


def manifest_of(job):
    return json.loads((Path(job["entry"]) / "manifest.json").read_text())


@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
def test_template_args_build_the_instantiation_and_record_its_lowered_name(run, tmp_path, compiler):
    tree = template_tree(tmp_path / "tree", ["double"])
    cache = tmp_path / "cache"
    report, _ = build(run, tree, cache, compiler)
    (job,) = jobs_by_state(report, "built")
    manifest = manifest_of(job)
    assert manifest["entry_symbol"] == LOWERED["double"]
    assert manifest["inputs"]["template_args"] == ["double"]
    assert LOWERED["double"].encode() in Path(job["artifacts"][0]).read_bytes()
    # Unchanged: a hit. Other arguments: a miss, another key, another symbol.
    report, _ = build(run, tree, cache, compiler)
    assert [j["key"] for j in jobs_by_state(report, "hit")] == [job["key"]]
    template_tree(tree, ["float"])
    report, _ = build(run, tree, cache, compiler)
    (other,) = jobs_by_state(report, "built")
    assert other["key"] != job["key"]
    assert manifest_of(other)["entry_symbol"] == LOWERED["float"]
    # Back to double: the first entry serves again.
    template_tree(tree, ["double"])
    report, _ = build(run, tree, cache, compiler)
    assert [j["key"] for j in jobs_by_state(report, "hit")] == [job["key"]]


@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
def test_the_explicit_instantiation_is_the_entry_without_template_args(run, tmp_path, compiler):
    source = TEMPLATE + "template __global__ void scale<float>(float*, float, int);\n"
    tree = template_tree(tmp_path / "tree", cuda=source)
    report, _ = build(run, tree, tmp_path / "cache", compiler)
    (job,) = jobs_by_state(report, "built")
    assert manifest_of(job)["entry_symbol"] == LOWERED["float"]
    assert manifest_of(job)["inputs"]["template_args"] == ["float"]


def test_a_template_without_arguments_fails_naming_file_line_and_key(run, tmp_path):
    tree = template_tree(tmp_path / "tree")
    report, _ = build(run, tree, tmp_path / "cache", "nvrtc", check=1)
    (job,) = jobs_by_state(report, "failed")
    cuda = tree / "pkg" / "kernels" / "scale" / "scale_cuda.cu"
    assert f"{cuda}:2: __global__ scale is a template (template <T>) without template arguments" in job["log"]
    assert 'template-args = { scale = ["double"] }' in job["log"]
    assert str(tree / "pyproject.toml") in job["log"]
    # The text output says it too, for a user without --json.
    result = run("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree / "pkg", check=1)
    assert "without template arguments" in result.stdout + result.stderr


def test_template_args_for_a_plain_kernel_or_of_the_wrong_count_fail(run, tmp_path):
    tree = template_tree(tmp_path / "tree", ["double", "3"])
    report, _ = build(run, tree, tmp_path / "cache", "nvrtc", check=1)
    assert "is a template with 1 parameter (T), but template-args in" in jobs_by_state(report, "failed")[0]["log"]
    tree = template_tree(tmp_path / "plain", ["double"], cuda="extern \"C\" __global__ void scale(double* x, double factor, int n) {}\n")
    report, _ = build(run, tree, tmp_path / "cache", "nvrtc", check=1)
    assert "scale_cuda.cu:1: __global__ scale is not a template, but template-args in" in jobs_by_state(report, "failed")[0]["log"]
