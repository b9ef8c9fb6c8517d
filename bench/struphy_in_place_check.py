"""Struphy's unchanged code on `build --in-place` builds: compiled everywhere, and results equal to pure Python.

Run with the interpreter Struphy is installed in, twice:

    python bench/struphy_in_place_check.py compiled OUT.npz   # the installed tree, built in place; Pyccel cannot be imported
    PYTHONPATH=COPY python bench/struphy_in_place_check.py python OUT.npz   # COPY: the same sources, nothing compiled
    python bench/struphy_in_place_check.py compare A.npz B.npz

Each run imports every kernel of Struphy's nine kernel packages through Struphy's own `__init__.py` files
(`Kernel.from_folder(__name__, structs=...)`, no compile_host), and runs the parity cases Struphy ships for its
CUDA kernels (`struphy.pic.tests.cuda_parity_cases`: 18 kernels, markers passed as `MarkerArguments` objects)
on the host, saving every array argument after the call. The compiled run also checks that each kernel selected
the "pyccel" implementation and that it is a compiled function from an in-place extension; the Python run,
that every one is the Python function of its `.py` file.
"""

import importlib
import json
import sys
import sysconfig

PACKAGES = (
    "struphy.pic.pushing.kernels",
    "struphy.pic.accumulation.kernels",
    "struphy.pic.diagnostics.kernels",
    "struphy.pic.sph.kernels",
    "struphy.pic.kernels",
    "struphy.bsplines.kernels",
    "struphy.geometry.kernels",
    "struphy.feec.kernels",
    "struphy.feec.local_projectors.kernels",
)


def kernels_of(package):
    """The kernels of `package`, as each folder's __init__.py declares them."""
    from cunumpy.kernels import KernelCatalog
    from struphy.utils.cuda_arguments import CUDA_STRUCTS

    names = list(KernelCatalog.from_package(package, structs=CUDA_STRUCTS))
    return {name: getattr(importlib.import_module(f"{package}.{name}"), name) for name in names}


def check_compiled(kernels, compiled=True):
    """Every kernel selects "pyccel", a compiled function of an extension beside its source
    (or, with `compiled` false, a Python function of its `.py` file)."""
    ext = sysconfig.get_config_var("EXT_SUFFIX")
    problems = []
    for qualified, kernel in kernels.items():
        package, name = qualified.rsplit(".", 1)
        implementations = kernel.host_kernel.kernel
        module = sys.modules[f"{package}.{name}.{name}_kernels"]
        function = implementations.get("pyccel")
        is_compiled = module.__file__.endswith(ext) and type(function).__name__ == "builtin_function_or_method"
        if implementations.selected() != "pyccel":
            problems.append(f"{qualified}: selected {implementations.selected()}")
        elif is_compiled != compiled:
            problems.append(f"{qualified}: {module.__file__} ({type(function).__name__})")
    return problems


def run_cases():
    """Every parity case on the host; the arrays among the arguments afterwards, by case and name."""
    import cunumpy as xp
    from struphy.pic.tests.cuda_parity_cases import PARITY_CASES, argument_arrays

    results = {}
    with xp.use_backend("numpy"):
        for name, spec in PARITY_CASES.items():
            kernel = find_kernel(name)
            for index, case in enumerate(spec.cases):
                args = spec.build(case)
                kernel(*args)
                for key, value in argument_arrays(args).items():
                    results[f"{name}/{index}/{key}"] = xp.to_numpy(value) if hasattr(xp, "to_numpy") else value
    return results


KERNELS = {}


def find_kernel(name):
    return next(kernel for qualified, kernel in KERNELS.items() if qualified.rsplit(".", 1)[1] == name)


def main():
    import numpy as np

    mode = sys.argv[1]
    if mode == "compare":
        a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
        assert sorted(a.files) == sorted(b.files), "different arrays"
        identical = sum(np.array_equal(a[k], b[k]) for k in a.files)
        worst = max(float(np.max(np.abs(a[k] - b[k]) / np.maximum(np.abs(b[k]), 1e-300), initial=0.0))
                    for k in a.files if a[k].dtype.kind == "f")
        close = all(np.allclose(a[k], b[k], rtol=1e-12, atol=1e-14) for k in a.files)
        print(json.dumps({"arrays": len(a.files), "bit_identical": int(identical), "max_rel_diff": worst,
                          "allclose_1e-12": close}))
        return 0 if close else 1
    if mode == "compiled":
        sys.modules["pyccel"] = None  # Pyccel cannot be imported, let alone compile
    for package in PACKAGES:
        for name, kernel in kernels_of(package).items():
            KERNELS[f"{package}.{name}"] = kernel
    problems = check_compiled(KERNELS, compiled=mode == "compiled")
    results = run_cases()
    np.savez(sys.argv[2], **results)
    print(json.dumps({"mode": mode, "kernels": len(KERNELS), "not_as_expected": problems, "arrays": len(results)}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
