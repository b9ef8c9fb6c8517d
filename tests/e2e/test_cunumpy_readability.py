"""check-signatures warns exactly when cunumpy's own reader fails on a declaration.

Every case runs cunumpy's real `parse_cuda_signature` (the installed
cunumpy, the one the tests' Python imports) and `check-signatures` on a
kernel whose host and CUDA declarations agree: the tool must warn
"cunumpy <version> cannot read this declaration" exactly when cunumpy
raises, and "cunumpy ... reads the declaration at line N" exactly when
cunumpy reads other names than the compiler's.
"""

import json
import subprocess

import pytest

from conftest import PYTHON

# name -> (CUDA source, the compiler's parameter names, template-args or None)
CASES = {
    "plain": ('extern "C" __global__ void push(double* x, int n) {}\n', ["x", "n"], None),
    "launch bounds before the name": ("__global__ void __launch_bounds__(256) push(double* x, int n) {}\n", ["x", "n"], None),
    "launch bounds first": ("__launch_bounds__(256) __global__ void push(double* x, int n) {}\n", ["x", "n"], None),
    "void before __global__": ("void __global__ push(double* x, int n) {}\n", ["x", "n"], None),
    "nameless prototype first": ("__global__ void push(double*, int);\n__global__ void push(double* x, int n) {}\n",
                                 ["x", "n"], None),
    "nameless prototype after": ("__global__ void push(double* x, int n) {}\n__global__ void push(double*, int);\n",
                                 ["x", "n"], None),
    "/* in a string, closed later": ('const char* s = "/*";\n__global__ void push(double* x, int n) {}\n// */\n',
                                     ["x", "n"], None),
    "/* in a string, never closed": ('const char* s = "/*";\n__global__ void push(double* x, int n) {}\n', ["x", "n"], None),
    "// in a string on the line": ('const char* u = "http://a"; __global__ void push(double* x, int n) {}\n', ["x", "n"], None),
    "macro for __global__": ('#define KERNEL extern "C" __global__\nKERNEL void push(double* x, int n) {}\n', ["x", "n"], None),
    "default argument, a number": ("__global__ void push(double* x, int n = 4) {}\n", ["x", "n"], None),
    "default argument, a name": ("#define N 4\n__global__ void push(double* x, int n = N) {}\n", ["x", "n"], None),
    "default argument, a float": ("__global__ void push(double* x, float a = 1.0f) {}\n", ["x", "a"], None),
    "__grid_constant__": ("__global__ void push(const __grid_constant__ double a, int n) {}\n", ["a", "n"], None),
    "template without template_args": ("template <typename T>\n__global__ void push(T* x, int n) {}\n", ["x", "n"], None),
    "template with template_args": ("template <typename T>\n__global__ void push(T* x, int n) {}\n", ["x", "n"], ["double"]),
    "explicit instantiation only": ("template <typename T>\n__global__ void push(T* x, int n) {}\n"
                                    "template __global__ void push<double>(double*, int);\n", ["x", "n"], None),
    "stale declaration in #if 0": ("#if 0\n__global__ void push(double* a, int b);\n#endif\n"
                                   "__global__ void push(double* x, int n) {}\n", ["x", "n"], None),
    "prototype with other names": ('extern "C" __global__ void push(double* y, int m);\n'
                                   'extern "C" __global__ void push(double* x, int n) {}\n', ["x", "n"], None),
    "pointer to pointer": ("__global__ void push(double** x, int n) {}\n", ["x", "n"], None),
    "std::size_t": ("__global__ void push(double* x, std::size_t n) {}\n", ["x", "n"], None),
    "views and qualifiers": ("__global__ void push(const double* __restrict__ x, Array2D<const double> a,\n"
                             "                     thrust::complex<double> z, unsigned long long n) {}\n",
                             ["x", "a", "z", "n"], None),
    "a view by pointer": ("__global__ void push(Array2D<double>* a, int n) {}\n", ["a", "n"], None),
    "comments inside": ("/* push(int wrong) */\n__global__ void push(double* x, // (in)\n int n /* ) */) {}\n",
                        ["x", "n"], None),
    "void parameters": ("__global__ void push(void) {}\n", [], None),
}


def cunumpy_reading(source, template_args):
    """(raises, names) of cunumpy's parse_cuda_signature."""
    script = (
        "import json, sys\n"
        "from cunumpy._cuda_kernel import parse_cuda_signature\n"
        "case = json.load(sys.stdin)\n"
        "try:\n"
        "    names = [p.name for p in parse_cuda_signature(case['source'], 'push', template_args=case['args'])]\n"
        "    print(json.dumps({'raises': False, 'names': names}))\n"
        "except ValueError as error:\n"
        "    print(json.dumps({'raises': True, 'why': str(error)}))\n"
    )
    result = subprocess.run([PYTHON, "-c", script], input=json.dumps({"source": source, "args": template_args}),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def kernel_tree(root, source, names, template_args):
    folder = root / "pkg" / "kernels" / "push"
    folder.mkdir(parents=True)
    for package in (root / "pkg", root / "pkg" / "kernels"):
        (package / "__init__.py").write_text("")
    (folder / "push_kernels.py").write_text(f"def push({', '.join(names)}):\n    pass\n")
    (folder / "push_cuda.cu").write_text(source)
    table = "[tool.cunumpy-kernels]\n"
    if template_args:
        table += "template-args = { push = [" + ", ".join(f'"{a}"' for a in template_args) + "] }\n"
    (root / "pyproject.toml").write_text(table)
    return root / "pkg"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_tool_warns_exactly_when_cunumpy_fails(run, tmp_path, case):
    source, names, template_args = CASES[case]
    cunumpy = cunumpy_reading(source, template_args)
    package = kernel_tree(tmp_path / "tree", source, names, template_args)
    result = run("check-signatures", "--format", "json", package, check=0)
    report = json.loads(result.stdout)
    assert report["kernels"][0]["agreement"] == "match", report
    assert report["ok"]
    kinds = [f["kind"] for f in report["findings"]]
    assert all(f["severity"] == "warning" for f in report["findings"])
    assert ("cunumpy-unreadable" in kinds) == cunumpy["raises"], (cunumpy, report["findings"])
    reads_other_names = not cunumpy["raises"] and cunumpy["names"] != names
    assert ("cunumpy-mismatch" in kinds) == reads_other_names, (cunumpy, report["findings"])
    for finding in report["findings"]:
        assert finding["message"].startswith("kernel 'push': cunumpy ")


def test_a_warning_in_each_format_and_the_exit_status(run, tmp_path):
    package = kernel_tree(tmp_path / "tree", CASES["launch bounds before the name"][0], ["x", "n"], None)
    text = run("check-signatures", package, cwd=tmp_path / "tree", check=0)
    version = cunumpy_version()
    assert text.stdout.splitlines() == [
        f"pkg/kernels/push/push_cuda.cu:1: warning: kernel 'push': cunumpy {version} cannot read this declaration: "
        "it finds no `__global__ void push(`: `__launch_bounds__(...)` stands between `__global__`, `void` and "
        "the name; write it first "
        "(`__launch_bounds__(256) __global__ void push(...)`)"
    ]
    assert "all agree, 1 warning" in text.stderr
    github = run("check-signatures", "--format", "github", package, cwd=tmp_path / "tree", check=0)
    assert github.stdout.startswith("::warning file=pkg/kernels/push/push_cuda.cu,line=1,title=kernel push%3A CUDA kernel::")
    report = json.loads(run("check-signatures", "--format", "json", package, check=0).stdout)
    assert report["summary"]["warnings"] == 1
    assert report["findings"][0]["severity"] == "warning"
    run("check-signatures", "--warnings-as-errors", package, check=1)
    (tmp_path / "tree" / "pyproject.toml").write_text("[tool.cunumpy-kernels]\nwarnings-as-errors = true\n")
    run("check-signatures", package, check=1)


def test_without_python_or_cunumpy_the_reference_version_is_named(run, tmp_path):
    package = kernel_tree(tmp_path / "tree", CASES["macro for __global__"][0], ["x", "n"], None)
    result = run("check-signatures", "--python", tmp_path / "no-such-python", package, check=0)
    assert "warning: kernel 'push': cunumpy 0.7.1 cannot read this declaration: it finds no `__global__ void push(`: " \
           "`__global__` comes from a macro" in result.stdout


def cunumpy_version():
    result = subprocess.run([PYTHON, "-c", "import importlib.metadata as m; print(m.version('cunumpy'))"],
                            capture_output=True, text=True, timeout=60, check=True)
    return result.stdout.strip()
