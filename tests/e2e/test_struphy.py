"""`build` and `status` on the real kernel tree of Struphy 3.5.0, as published on PyPI.

The figures are this release's: 18 CUDA kernels in 9 kernel packages, every
one of which builds for sm_90, and per package the porting line that
cunumpy's own `KernelCatalog.summary()` prints.
"""

import json
import subprocess
import textwrap

from conftest import PYTHON, jobs_by_state

PACKAGES = [
    "struphy.bsplines.kernels",
    "struphy.feec.kernels",
    "struphy.feec.local_projectors.kernels",
    "struphy.geometry.kernels",
    "struphy.pic.accumulation.kernels",
    "struphy.pic.diagnostics.kernels",
    "struphy.pic.kernels",
    "struphy.pic.pushing.kernels",
    "struphy.pic.sph.kernels",
]
CUDA_KERNELS = 18

# cunumpy's summary() of each package, from_package as Struphy's own code calls
# it. Every folder is registered as an empty package first, so that Struphy's
# __init__.py files (whose dependencies this environment lacks) do not run;
# the struct checks of Struphy's CUDA_STRUCTS are off, as they change no count.
CUNUMPY_SUMMARIES = """
import importlib, importlib.machinery, json, sys, types, warnings
from pathlib import Path
import cunumpy as xp

root = Path(sys.argv[1])
sys.path.insert(0, str(root))
for folder in [root / "struphy", *sorted(p for p in (root / "struphy").rglob("*") if p.is_dir())]:
    name = ".".join(folder.relative_to(root).parts)
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    package.__file__ = str(folder / "__init__.py")
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, origin=package.__file__, is_package=True)
    package.__spec__.submodule_search_locations = [str(folder)]
    sys.modules[name] = package
summaries = {}
for name in sys.argv[2:]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summaries[name] = xp.kernels.KernelCatalog.from_package(name, check_signature=False).summary()
print(json.dumps(summaries))
"""


def cuda_kernel_folders(tree):
    return sorted(p.parent for p in tree.rglob("*_cuda.cu") if p.name == p.parent.name + "_cuda.cu")


def test_all_18_struphy_cuda_kernels_build_for_sm_90_and_the_second_run_is_warm(run, struphy_tree, tmp_path):
    expected = {folder.name for folder in cuda_kernel_folders(struphy_tree / "struphy")}
    assert len(expected) == CUDA_KERNELS
    args = ["build", "--only", "cuda", "--jobs", "2", "--arch", "sm_90", "--no-ptx", "--cache-dir", tmp_path / "cache",
            struphy_tree / "struphy"]
    report, result = run.json(*args, timeout=1800)
    assert result.returncode == 0, result.stderr
    assert [k for k in report["kernels"] if k["cuda"]] and len(report["jobs"]) == CUDA_KERNELS
    built = jobs_by_state(report, "built")
    assert {job["kernel"] for job in built} == expected, [j["log"] for j in report["jobs"] if j["state"] != "built"]
    assert {job["target"] for job in built} == {"sm_90"}
    for job in built:
        cubin = job["artifacts"][0]
        assert cubin.endswith(".sm_90.cubin"), cubin
        with open(cubin, "rb") as file:
            assert file.read(4) == b"\x7fELF"

    report, result = run.json(*args)
    assert result.returncode == 0, result.stderr
    assert len(jobs_by_state(report, "hit")) == CUDA_KERNELS and not jobs_by_state(report, "built")


def test_each_struphy_package_reports_the_porting_line_cunumpy_prints(run, struphy_tree, tmp_path):
    cunumpy = subprocess.run([PYTHON, "-c", textwrap.dedent(CUNUMPY_SUMMARIES), str(struphy_tree), *PACKAGES],
                             capture_output=True, text=True, timeout=600)
    assert cunumpy.returncode == 0, cunumpy.stderr
    expected = json.loads(cunumpy.stdout.strip().splitlines()[-1])
    with_cuda = 0
    for package in PACKAGES:
        folder = struphy_tree.joinpath(*package.split("."))
        result = run("status", "--cache-dir", tmp_path / "cache", folder, check=0)
        assert result.stdout.splitlines()[0] == expected[package], package
        with_cuda += int(expected[package].split()[2])
    assert with_cuda == CUDA_KERNELS
