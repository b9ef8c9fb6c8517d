"""The tool's walk, summary line and signature findings against cunumpy's own.

A corpus of small kernel packages covers each rule of cunumpy 0.7.1's
`KernelCatalog.from_package`, `Kernel.from_folder`, `summary()` and
`check_signatures()` (issue 11): every form Python allows in a parameter
list, module-level aliases, folders that look like kernels and are not,
non-ASCII names, suffixes and the name-length warning. cunumpy runs in
`.venv` in a child process; the tool runs as a user runs it. Where cunumpy
itself is wrong, the case is listed in CUNUMPY_IS_WRONG with why, and left out.
"""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import SOURCE_ROOT

VENV_PYTHON = SOURCE_ROOT / ".venv" / "bin" / "python"

# Kernel name -> (Python parameter list, the positional names inspect.signature gives).
# Each becomes `def <name>(<list>)` beside a CUDA kernel taking those names.
PARAMETER_FORMS = {
    "posonly": ("a, b, /, c", ["a", "b", "c"]),
    "posonly_defaults": ("a, b=1, /, c=2", ["a", "b", "c"]),
    "bare_star": ("a, *, b", ["a"]),
    "kwonly_defaults": ("a, *, b=1, c", ["a"]),
    "star_args": ("a, *args, b=2", ["a"]),
    "star_kwargs": ("a, b, **kwargs", ["a", "b"]),
    "everything": ("a, /, b, *args, c, d=4, **kw", ["a", "b"]),
    "string_annotations": ("a: 'float[:, :]', b: \"dict[str, list[int]]\" = None, c: 'int' = 3",
                           ["a", "b", "c"]),
    "expression_annotations": ("a: 'float[:]', n: int = len((1, 2)), *, out: list = None", ["a", "n"]),
    "defaults_with_commas": ("a=(1, 2), b=[3, 4], c={'k': (5, 6)}", ["a", "b", "c"]),
    "lambda_default": ("f=lambda x, y: (x, y), g=2", ["f", "g"]),
    "comments_between": ("\n    a,  # first, (not a parameter)\n    # b, c)\n    b: 'float[:]',  # ]\n    c=')',\n",
                         ["a", "b", "c"]),
    "trailing_comma": ("a,\n    b,\n", ["a", "b"]),
    "no_parameters": ("", []),
}

CUNUMPY_IS_WRONG = {
    # cunumpy 0.7.1 reads a declaration inside `#if 0` (a false mismatch); the
    # tool skips it, as the compiler does. Not in this corpus: its own test
    # is in test_check_signatures.py.
}


def cuda_kernel(name, parameters):
    declared = ", ".join(f"double* {p}" for p in parameters)
    return f'extern "C" __global__ void {name}({declared}) {{}}\n'


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def package(root, name):
    """src/<name>/kernels/ with its __init__.py files; returns the kernels folder."""
    kernels = root / "src" / name / "kernels"
    write(root / "src" / name / "__init__.py", "")
    write(kernels / "__init__.py", "")
    return kernels


def kernel(kernels, name, host, cuda=None, host_suffix="_kernels", cuda_suffix="_cuda.cu"):
    write(kernels / name / f"{name}{host_suffix}.py", host)
    if cuda is not None:
        write(kernels / name / f"{name}{cuda_suffix}", cuda)


def forms_package(root):
    """Every parameter form and binding cunumpy reads, plus folders that are not kernels."""
    kernels = package(root, "forms")
    for name, (parameters, names) in PARAMETER_FORMS.items():
        kernel(kernels, name, f"def {name}({parameters}):\n    pass\n", cuda_kernel(name, names))
    # Item 2: the binding Python keeps is what cunumpy calls.
    kernel(kernels, "alias", "def alias(x, n):\n    pass\n\n\ndef _fast(y, m):\n    pass\n\n\nalias = _fast\n",
           cuda_kernel("alias", ["y", "m"]))
    kernel(kernels, "alias_mismatch", "def _impl(b, a):\n    pass\n\n\nalias_mismatch = _impl\n",
           cuda_kernel("alias_mismatch", ["a", "b"]))
    kernel(kernels, "wrapped", textwrap.dedent("""\
        import functools


        def traced(function):
            @functools.wraps(function)
            def run(*args):
                return function(*args)
            return run


        def wrapped(x, v):
            pass


        wrapped = traced(wrapped)
        """), cuda_kernel("wrapped", ["x", "v"]))
    kernel(kernels, "guarded", "try:\n    import not_installed_module\nexcept ImportError:\n"
           "    def guarded(p, q):\n        pass\n", cuda_kernel("guarded", ["p", "q"]))
    kernel(kernels, "swapped", "def swapped(x, v, n):\n    pass\n", cuda_kernel("swapped", ["v", "x", "n"]))
    # Which branch runs decides what cunumpy calls: a warning, not a mismatch (cunumpy passes, NOPE being unset).
    kernel(kernels, "branches", "import os\n\nif os.environ.get('NOPE'):\n    def branches(z):\n        pass\n"
           "else:\n    def branches(a, b):\n        pass\n", cuda_kernel("branches", ["a", "b"]))
    # A host kernel alone, and one with a NumPy version that cunumpy compares.
    kernel(kernels, "host_only", "def host_only(x):\n    pass\n")
    kernel(kernels, "with_numpy", "def with_numpy(x, n):\n    pass\n")
    write(kernels / "with_numpy" / "with_numpy_numpy.py", "def with_numpy(x, m):\n    pass\n")
    # Item 3: neither is a kernel under the default suffix.
    write(kernels / "pyccel_only" / "pyccel_only_pyccel.py", "def pyccel_only(x):\n    pass\n")
    write(kernels / "numpy_only" / "numpy_only_numpy.py", "def numpy_only(x):\n    pass\n")
    # Item 4: Python imports a non-ASCII name; only Pyccel cannot build it.
    kernel(kernels, "café", "def café(x):\n    pass\n")
    return root / "src"


def cunumpy_report(src, package_name, **options):
    """cunumpy's own view of a package: kernels, summary, check_signatures, warnings, or the error."""
    script = textwrap.dedent("""\
        import json, sys, warnings
        import cunumpy as xp
        options = json.loads(sys.argv[2])
        report = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                catalog = xp.kernels.KernelCatalog.from_package(sys.argv[1], **options)
            except Exception as error:
                report["error"] = f"{type(error).__name__}: {error}"
            else:
                report["kernels"] = sorted(catalog)
                report["summary"] = catalog.summary()
                report["host_parameters"] = {n: catalog[n].host_parameters() for n in catalog}
                try:
                    catalog.check_signatures()
                    report["mismatched"] = []
                except ValueError as error:
                    report["mismatched"] = sorted(set(__import__("re").findall(r"kernel '(\\w+)'", str(error))))
        report["warnings"] = [str(w.message) for w in caught]
        print(json.dumps(report))
        """)
    env = dict(os.environ, PYTHONPATH=str(src))
    result = subprocess.run([str(VENV_PYTHON), "-c", script, package_name, json.dumps(options)], cwd=src,
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def tool_report(run, src, *flags):
    result = run("check-signatures", "--format", "json", *flags, src, cwd=src)
    report = json.loads(result.stdout)
    return report, result


def tool_summary(run, src, tmp_path, *flags):
    result = run("status", "--cache-dir", tmp_path / "cache", *flags, src, cwd=src, check=0)
    return result.stdout.splitlines()[0]


needs_cunumpy = pytest.mark.skipif(
    subprocess.run([str(VENV_PYTHON), "-c", "import cunumpy"], capture_output=True).returncode != 0,
    reason="cunumpy is not installed in .venv (scripts/setup installs it)")


@needs_cunumpy
def test_every_parameter_form_and_binding_reads_as_cunumpy_reads_it(run, tmp_path):
    src = forms_package(tmp_path)
    expected = cunumpy_report(src, "forms.kernels")
    assert "error" not in expected, expected
    report, result = tool_report(run, src)
    tool_kernels = sorted(k["kernel"] for k in report["kernels"])
    assert tool_kernels == expected["kernels"]
    for kernel in report["kernels"]:
        if kernel["declarations"] and "parameters" in kernel["declarations"][0]:
            host = kernel["declarations"][0]
            assert host["parameters"] == expected["host_parameters"][kernel["kernel"]], kernel["kernel"]
    for name, (_, names) in PARAMETER_FORMS.items():
        assert expected["host_parameters"][name] == names, f"the table is wrong about {name}"
    mismatched = sorted(k["kernel"] for k in report["kernels"] if k["agreement"] == "mismatch")
    assert mismatched == expected["mismatched"] == ["alias_mismatch", "swapped", "with_numpy"]
    [branches] = [f for f in report["findings"] if f["kernel"] == "branches"]
    assert branches["kind"] == "conditional" and branches["severity"] == "warning"
    assert "which one cunumpy calls depends on how the module runs" in branches["message"]
    assert result.returncode == 1
    assert tool_summary(run, src, tmp_path) == expected["summary"]
    assert "café" in result.stderr and "Pyccel cannot build it" in result.stderr


@needs_cunumpy
def test_a_folder_without_its_function_is_a_finding_where_cunumpy_raises_for_the_package(run, tmp_path):
    kernels = package(tmp_path, "broken")
    kernel(kernels, "good", "def good(x):\n    pass\n", cuda_kernel("good", ["x"]))
    kernel(kernels, "cuboid", "def evaluate(x):\n    pass\n")  # Struphy's geometry/domains have this form
    src = tmp_path / "src"
    expected = cunumpy_report(src, "broken.kernels")
    assert expected["error"].startswith("AttributeError") and "'cuboid'" in expected["error"]
    report, result = tool_report(run, src)
    assert [k["kernel"] for k in report["kernels"]] == ["good"]
    # A finding of the walk: in the JSON report, as a GitHub annotation on the module, and fatal on request.
    [warning] = report["walk_warnings"]
    assert re.search(r"cuboid_kernels\.py: defines no function 'cuboid', so this folder is not a kernel", warning)
    assert result.returncode == 0
    github = run("check-signatures", "--format", "github", src, cwd=src, env={"GITHUB_WORKSPACE": str(tmp_path)},
                 check=0).stdout
    assert github.startswith("::warning file=src/broken/kernels/cuboid/cuboid_kernels.py::"), github
    strict = run("check-signatures", "--warnings-as-errors", src, cwd=src, check=1)
    assert "all agree, 1 warning" in strict.stderr
    strict = json.loads(run("check-signatures", "--warnings-as-errors", "--format", "json", src, cwd=src,
                            check=1).stdout)
    assert strict["ok"] is False and strict["summary"]["warnings"] == 1
    # Named in full on the first run above; this later run's line points at the same file.
    assert strict["walk_warnings"][0].startswith("broken/kernels/cuboid/cuboid_kernels.py: ")
    assert "not a kernel" in strict["walk_warnings"][0]
    # Without the folder, cunumpy agrees with the tool's walk.
    (kernels / "cuboid" / "cuboid_kernels.py").unlink()
    assert cunumpy_report(src, "broken.kernels")["kernels"] == ["good"]
    assert tool_summary(run, src, tmp_path) == "CUDA kernels: 1 of 1"


@needs_cunumpy
def test_suffixes_as_cunumpy_spells_them_and_the_name_length_limit_they_give(run, tmp_path):
    kernels = package(tmp_path, "suffix")
    fits = "k" * (63 - len("bind_c_") - len("_host"))  # 51 characters: the wrapper has 63
    too_long = fits + "x"
    for name in (fits, too_long, "short"):
        kernel(kernels, name, f"def {name}(x):\n    pass\n", cuda_kernel(name, ["x"]),
               host_suffix="_host", cuda_suffix="_gpu.cu")
    src = tmp_path / "src"
    expected = cunumpy_report(src, "suffix.kernels", host_suffix="_host", cuda_suffix="_gpu.cu")
    flags = ["--host-suffix", "_host", "--cuda-suffix", "_gpu.cu"]
    report, result = tool_report(run, src, *flags)
    assert sorted(k["kernel"] for k in report["kernels"]) == expected["kernels"]
    assert all(k["agreement"] == "match" for k in report["kernels"])
    assert tool_summary(run, src, tmp_path, *flags) == expected["summary"] == "CUDA kernels: 3 of 3"
    warned = [w for w in expected["warnings"] if "Fortran" in w]
    assert len(warned) == 1 and too_long in warned[0] and "at most 51 characters" in warned[0]
    assert result.stderr.count("longer than Fortran's limit of 63") == 1
    assert f"'{too_long}'" in result.stderr and "at most 51 characters" in result.stderr


@needs_cunumpy
def test_an_empty_kernel_cache_variable_means_the_working_folder_as_for_cunumpy(run, tmp_path):
    kernels = package(tmp_path, "emptyvar")
    kernel(kernels, "push", "def push(x):\n    pass\n", cuda_kernel("push", ["x"]))
    src = tmp_path / "src"
    work = tmp_path / "work"
    work.mkdir()
    script = "from cunumpy.kernels import PyccelCache; print(PyccelCache('emptyvar').cache_root().resolve())"
    cunumpy_root = subprocess.run([str(VENV_PYTHON), "-c", script], cwd=work, capture_output=True, text=True,
                                  env=dict(os.environ, EMPTYVAR_KERNEL_CACHE=""), timeout=120).stdout.strip()
    assert cunumpy_root == str(work.resolve())
    run("build", "--only", "cuda", "--arch", "sm_90", "--no-ptx", src, cwd=work, env={"EMPTYVAR_KERNEL_CACHE": ""},
        check=0)
    path = run("cache", "path", "push", "--arch", "sm_90", "--tree", src, cwd=work, env={"EMPTYVAR_KERNEL_CACHE": ""},
               check=0).stdout.strip()
    assert path.startswith(str(work.resolve()) + os.sep), path
