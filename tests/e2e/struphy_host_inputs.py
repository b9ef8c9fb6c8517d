"""Inputs and Python results for calling Struphy's kernels from C++ (test_struphy_host_calls.py).

    python struphy_host_inputs.py TREE ENTRIES_JSON KERNELS_JSON DATA

For each kernel (its folder and the Python extension `build` published),
finds inputs on which the kernel's plain-Python source runs in bounds and
changes at least one array: integer scalars and index arrays from a few plain
choices, then seeded random ones; every array axis starts at 2 and grows to
what the kernel indexes or slices. Python's wrap of a negative index is
refused (Pyccel's C does not wrap a computed one), so is a NumPy broadcast
Pyccel's C would read past. Then calls the Python extension on a copy,
writes the inputs as raw buffers and a call file for kernel-call-app, and the
extension's results beside them (`<argument>.py`). Prints one JSON line:
per kernel the choices it used, the arguments it changed, and the largest
difference between the extension and plain Python (a check that the inputs
exercise the compiled code as the source means it).
"""

import ast
import copy
import importlib
import importlib.util
import json
import linecache
import re
import sys
import traceback
import types
from pathlib import Path

import numpy as np

# (every int scalar, the first value of every int array): tried in order.
CANDIDATES = [(1, 2), (1, 1), (0, 0), (2, 3), (1, 0)]
START_EXTENT = 2  # never 1: NumPy would broadcast an axis of 1 where Pyccel's C reads past it
INDEX_LENGTH = 2
MAX_ELEMENTS = 1 << 22
ROUNDS = 200


class NegativeIndex(Exception):
    pass


def literal_negative_index():
    """Whether the kernel's line indexes with a literal such as `a[-1]`, which Pyccel translates."""
    frame = sys._getframe(3)
    return bool(re.search(r"[\[,]\s*-\s*\d", linecache.getline(frame.f_code.co_filename, frame.f_lineno)))


class OutOfBounds(Exception):
    def __init__(self, array, axis, needed):
        super().__init__(f"array {array} axis {axis} needs {needed}")
        self.array, self.axis, self.needed = array, axis, needed


class Checked(np.ndarray):
    """An array that names the axis an index or slice runs past, and refuses negative indices (Pyccel's C
    does not wrap them)."""

    name = None
    last_view = None  # (name, source axis of each result axis, result shape) of the last slice taken

    def _check(self, index):
        items = index if isinstance(index, tuple) else (index,)
        if self.name is None or len(items) > self.ndim:
            return
        for axis, item in enumerate(items):
            if isinstance(item, (int, np.integer)):
                if item < 0 and not literal_negative_index():
                    raise NegativeIndex(f"{self.name}[{index}]")
                if item >= self.shape[axis]:
                    raise OutOfBounds(self.name, axis, int(item) + 1)
            elif isinstance(item, slice) and item.stop is not None:
                if item.stop < 0 or (item.start is not None and item.start < 0):
                    raise NegativeIndex(f"{self.name}[{index}]")
                if item.stop > self.shape[axis]:
                    raise OutOfBounds(self.name, axis, int(item.stop))

    def __getitem__(self, index):
        self._check(index)
        result = super().__getitem__(index)
        if self.name is not None and isinstance(result, np.ndarray):
            Checked.last_view = (self.name, view_axes(index, self.ndim), result.shape)
        return result

    def __setitem__(self, index, value):
        self._check(index)
        if self.name is not None and isinstance(value, np.ndarray):
            self._fit(index, value.shape)
        super().__setitem__(index, value)

    def _fit(self, index, source):
        """A parameter that receives a longer slice (`swap_line[:] = markers[:, i]`) grows to take it."""
        target = super().__getitem__(index).shape
        axes = view_axes(index, self.ndim)
        if len(source) == len(target) == len(axes):
            for k, (have, want) in enumerate(zip(target, source)):
                if want > have:
                    raise OutOfBounds(self.name, axes[k], self.shape[axes[k]] + want - have)


def view_axes(index, ndim):
    """The axis of the indexed array each axis of `array[index]` comes from."""
    items = index if isinstance(index, tuple) else (index,)
    return [axis for axis, item in enumerate(items) if isinstance(item, slice)] + list(range(len(items), ndim))


def register_packages(root):
    for folder in sorted(p for p in (root / "struphy").rglob("*") if p.is_dir()) + [root / "struphy"]:
        name = ".".join(folder.relative_to(root).parts)
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package


def parameters(source, name):
    """(name, annotation) of the kernel's parameters, annotations as written ('float[:,:]', 'int')."""
    tree = ast.parse(source.read_text())
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)
    found = []
    for argument in function.args.args:
        annotation = argument.annotation
        text = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
        found.append((argument.arg, text.replace(" ", "")))
    return found


RANDOM_TRIALS = 400
SHOWN_REASONS = 6


def choices_for(params, integer, base):
    """One candidate: every int scalar `integer`, every 1D int array counting up from `base` (index
    arrays such as knot spans increase from the degree), every other int array filled with `base`."""
    found = {}
    for name, annotation in params:
        if annotation == "int":
            found[name] = integer
        elif annotation.startswith("int["):
            found[name] = ("arange" if annotation.count(":") == 1 else "full", base)
    return found


def random_choices(params, rng):
    found = {}
    for name, annotation in params:
        if annotation == "int":
            found[name] = int(rng.integers(0, 4))
        elif annotation.startswith("int["):
            found[name] = (("arange", "full")[rng.integers(0, 2)], int(rng.integers(0, 4)))
    return found


def make_value(annotation, shape, choice, rng):
    kind, _, dims = annotation.partition("[")
    if not dims:
        return {"int": choice, "float": float(rng.uniform(0.1, 0.9)), "bool": True}[kind]
    if kind == "float":
        return rng.uniform(0.0, 1.0, shape)
    if kind == "bool":
        return rng.uniform(0.0, 1.0, shape) < 0.5
    pattern, base = choice
    if pattern == "arange":
        return (np.arange(np.prod(shape), dtype=np.int64) + base).reshape(shape)
    return np.full(shape, base, dtype=np.int64)


def shapes_of(params):
    return {name: [START_EXTENT] * a.count(":") for name, a in params if "[" in a}


def checked(params, values):
    trial = []
    for (name, _), value in zip(params, values):
        if isinstance(value, np.ndarray):
            value = value.copy().view(Checked)
            value.name = name
        trial.append(value)
    return trial


def plain(values):
    return [v.view(np.ndarray).copy() if isinstance(v, np.ndarray) else v for v in values]


BROADCAST = re.compile(r"from shape \(([\d, ]*)\) into shape \(([\d, ]*)\)")


def resize_for_broadcast(error, shapes):
    """A full slice of a parameter copied into a kernel's own array (`b1[:] = b1s[i, :]`) must have
    that array's extent: NumPy refuses other extents, Pyccel's C would read past or short."""
    match = BROADCAST.search(str(error))
    view = Checked.last_view
    if not match or view is None:
        return False
    source = tuple(int(x) for x in match.group(1).replace(" ", "").split(",") if x)
    target = tuple(int(x) for x in match.group(2).replace(" ", "").split(",") if x)
    name, axes, shape = view
    if shape != source or len(source) != len(target):
        return False
    for k, (have, want) in enumerate(zip(source, target)):
        if have != want and axes[k] is not None:
            shapes[name][axes[k]] = want
    return True


def try_candidate(function, params, choices, seed):
    """Grows the arrays' axes until the plain-Python kernel runs in bounds: (values, results), or the
    reason it cannot."""
    shapes = shapes_of(params)
    for _ in range(ROUNDS):
        rng = np.random.default_rng(seed)
        values = [make_value(a, shapes.get(name), choices.get(name), rng) for name, a in params]
        trial = checked(params, values)
        Checked.last_view = None
        try:
            function(*trial)
        except OutOfBounds as grow:
            shapes[grow.array][grow.axis] = grow.needed
            if np.prod(shapes[grow.array]) > MAX_ELEMENTS:
                return f"{grow}: more than {MAX_ELEMENTS} elements"
            continue
        except ValueError as error:
            if resize_for_broadcast(error, shapes):
                continue
            return failure(choices, error)
        except (NegativeIndex, IndexError, ZeroDivisionError) as error:
            return failure(choices, error)
        return values, plain(trial)
    return f"{choices}: no in-bounds shapes after {ROUNDS} rounds"


def failure(choices, error):
    line = traceback.extract_tb(error.__traceback__)[-1]
    return f"{choices}: {type(error).__name__}: {error} ({Path(line.filename).name}:{line.lineno})"


def boxed_markers(rng):
    """sort_and_fill_boxes's arguments: markers (columns) whose row -2 holds their box as a float, a few
    holes (row 0 is -1) in the last box, the count per box, and room for the box array; as
    struphy.pic.base.Particles keeps them. No search finds these: the kernel follows the box numbers."""
    rows, count, n_boxes = 7, 24, 5
    markers = rng.uniform(0.0, 1.0, (rows, count))
    boxes_of = rng.integers(0, n_boxes - 1, count)
    holes = rng.uniform(0.0, 1.0, count) < 0.2
    boxes_of[holes] = n_boxes - 1
    markers[0, holes] = -1.0
    markers[rows - 2] = boxes_of
    next_index = np.bincount(boxes_of, minlength=n_boxes).astype(np.int64)
    return [markers, np.zeros(count, dtype=np.bool_), np.zeros((n_boxes, count + 1), dtype=np.int64), next_index,
            np.zeros(n_boxes + 1, dtype=np.int64), np.zeros(rows), np.zeros(rows), -2]


# Kernels whose arguments are a data structure rather than sizes and indices.
BUILT_BY_HAND = {"sort_and_fill_boxes": boxed_markers}


def run_as_given(function, params, values):
    trial = checked(params, values)
    try:
        function(*trial)
    except (OutOfBounds, NegativeIndex, IndexError, ValueError, ZeroDivisionError) as error:
        return failure("inputs built by hand", error)
    return values, plain(trial)


def find_inputs(function, params, seed, reasons):
    """The first candidate on which the kernel runs in bounds and changes an array: the plain ones,
    then random ones (seeded); or the inputs built by hand for the kernel."""
    rng = np.random.default_rng(seed)
    if function.__name__ in BUILT_BY_HAND:
        found = run_as_given(function, params, BUILT_BY_HAND[function.__name__](rng))
        return found_or_reason(params, "by hand", found, reasons)
    candidates = [choices_for(params, integer, base) for integer, base in CANDIDATES]
    candidates += [random_choices(params, rng) for _ in range(RANDOM_TRIALS)]
    for choices in candidates:
        found = found_or_reason(params, choices, try_candidate(function, params, choices, seed), reasons)
        if found[0] is not None:
            return found
    return None, None, None, []


def found_or_reason(params, choices, found, reasons):
    """(choices, values, results, changed arguments) when the run changed an array; else the reason is kept."""
    if not isinstance(found, str):
        values, results = found
        changed = [name for (name, _), before, after in zip(params, values, results)
                   if isinstance(before, np.ndarray) and not np.array_equal(before, after)]
        if changed:
            return choices, values, results, changed
        found = f"{choices}: changed no array"
    if len(reasons) < SHOWN_REASONS:
        reasons.append(found)
    return None, None, None, []


def load_extension(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_call(out, calls, folder, name, params, values):
    lines = [f"call {folder.parent} {name}"]
    for (argument, annotation), value in zip(params, values):
        if isinstance(value, np.ndarray):
            path = out / argument
            value.tofile(path)
            strides = " ".join(str(s // value.itemsize) for s in value.strides)
            shape = " ".join(str(s) for s in value.shape)
            dtype = {"float64": "float64", "int64": "int64", "bool": "bool"}[str(value.dtype)]
            lines.append(f"array {dtype} {path} {value.ndim} {shape} {strides}")
        elif isinstance(value, bool):
            lines.append(f"scalar bool {int(value)}")
        elif isinstance(value, int):
            lines.append(f"scalar int64 {value}")
        else:
            lines.append(f"scalar float64 {float(value).hex()}")
    lines.append("end")
    calls.write("\n".join(lines) + "\n")


def main():
    root, entries, kernels, data = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3]), Path(sys.argv[4])
    register_packages(root)
    report = {}
    with open(data / "calls", "w") as calls:
        for folder_text in kernels:
            folder = root / folder_text
            name = folder.name
            module_name = ".".join(folder.relative_to(root).parts) + f".{name}_kernels"
            params = parameters(folder / f"{name}_kernels.py", name)
            source_function = getattr(importlib.import_module(module_name), name)
            reasons = []
            choices, values, python_results, changed = find_inputs(source_function, params, 3, reasons)
            if choices is None:
                report[name] = {"inputs": None, "reasons": reasons}
                continue
            compiled = getattr(load_extension(module_name, entries[module_name]), name)
            extension_values = copy.deepcopy(values)
            compiled(*extension_values)
            out = data / name
            out.mkdir()
            write_call(out, calls, folder, name, params, values)
            difference = 0.0
            for (argument, _), result, reference in zip(params, extension_values, python_results):
                if isinstance(result, np.ndarray):
                    result.tofile(out / f"{argument}.py")
                    if result.dtype == np.float64:
                        difference = max(difference, float(np.max(np.abs(result - reference))))
                    elif not np.array_equal(result, reference):
                        difference = float("inf")
            report[name] = {"inputs": choices, "changed": changed, "difference": difference}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
