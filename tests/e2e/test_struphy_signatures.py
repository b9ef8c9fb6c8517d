"""`check-signatures` and `status` on the real kernel tree of Struphy, as published on PyPI.

Every declaration the readers find is checked against an independent reading:
Python's own `ast` for the host kernels, and a plain scan of the comment-free
declaration for the CUDA kernels (enough for Struphy's simple declarations).
"""

import ast
import json
import re
import shutil
from pathlib import Path


def binds(module, name):
    """Whether the module's top level binds `name` (def, class, assignment, import), read with Python's ast."""
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                return True
    return False


def candidate_folders(root):
    """Folders by the guide's file rule, a folder holding such folders being a package."""
    candidates = {p.parent for p in root.rglob("*_kernels.py") if p.name == p.parent.name + "_kernels.py"
                  and not any(part.startswith(".") or part in ("__pycache__", "__pyccel__") for part in p.parts)}
    return {c for c in candidates if not any(o != c and c in o.parents for o in candidates)}


def kernel_folders(root):
    """Kernel folders as cunumpy's from_folder takes them: the module also binds the folder's name."""
    return {c for c in candidate_folders(root) if binds(c / f"{c.name}_kernels.py", c.name)}


def host_parameters(file, name):
    tree = ast.parse(file.read_text())
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    args = functions[-1].args
    return [a.arg for a in args.posonlyargs + args.args]


def cuda_parameters(file, name):
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", file.read_text(), flags=re.S)
    start = re.search(r"__global__\s+void\s+" + name + r"\s*\(", text).end()
    depth, end = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    parts, depth, current = [], 0, ""
    for char in text[start:end - 1]:
        depth += {"<": 1, ">": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [re.findall(r"\w+", p.split("=")[0])[-1] for p in parts if p.strip()]


def test_check_signatures_reads_every_struphy_declaration_as_python_and_a_plain_scan_do(run, struphy_tree):
    root = struphy_tree / "struphy"
    result = run("check-signatures", "--format", "json", root, cwd=struphy_tree)
    report = json.loads(result.stdout)
    folders = kernel_folders(root)
    ported = {f for f in folders if (f / f"{f.name}_cuda.cu").exists()}
    assert report["summary"]["kernels"] == len(folders)
    assert len(ported) == 18 and report["summary"]["match"] == 18
    for kernel in report["kernels"]:
        if kernel["agreement"] == "-":
            continue
        host, cuda = kernel["declarations"][:2]
        assert host["parameters"] == host_parameters(struphy_tree / host["file"], kernel["kernel"])
        assert cuda["parameters"] == cuda_parameters(struphy_tree / cuda["file"], kernel["kernel"]), kernel["kernel"]
    # Struphy 3.5.0's declarations agree everywhere: no finding, exit 0.
    assert report["findings"] == [] and result.returncode == 0, report["findings"]
    # Six folders look like kernels and are not (geometry/domains/*, post_processing/orbits): each is
    # named, all in one warning line, not one paragraph each.
    not_kernels = candidate_folders(root) - folders
    assert len(not_kernels) == 6
    [warning] = [line for line in result.stderr.splitlines() if "not kernels" in line or "defines no function" in line]
    assert "6 folders are not kernels" in warning
    for folder in not_kernels:
        assert f"{folder.name}_kernels.py (no '{folder.name}')" in warning, folder


def test_struphy_folders_declared_in_not_kernels_are_named_no_more(run, struphy_tree, tmp_path):
    copy = tmp_path / "struphy"
    shutil.copytree(struphy_tree / "struphy", copy)
    not_kernels = sorted(str(f.relative_to(tmp_path)) for f in candidate_folders(copy) - kernel_folders(copy))
    assert len(not_kernels) == 6
    listed = ", ".join(f'"{folder}"' for folder in not_kernels)
    (tmp_path / "pyproject.toml").write_text(f"[tool.cunumpy-kernels]\nnot-kernels = [{listed}]\n")
    result = run("check-signatures", copy, cwd=tmp_path, check=0)
    assert "not kernels" not in result.stderr and "defines no function" not in result.stderr, result.stderr
    status = run("status", "--only", "cuda", copy, cwd=tmp_path)
    assert "not kernels" not in status.stderr and "defines no function" not in status.stderr, status.stderr
    # One left off the list is named alone.
    (tmp_path / "pyproject.toml").write_text(f"[tool.cunumpy-kernels]\nnot-kernels = [{listed.split(', ', 1)[1]}]\n")
    result = run("check-signatures", copy, cwd=tmp_path, check=0)
    [warning] = [line for line in result.stderr.splitlines() if "defines no function" in line]
    assert Path(not_kernels[0]).name + "_kernels.py: defines no function" in warning and "not-kernels" in warning


def test_a_swapped_struphy_parameter_is_found_with_both_lines(run, struphy_tree, tmp_path):
    copy = tmp_path / "struphy"
    shutil.copytree(struphy_tree / "struphy", copy)
    kernel = copy / "pic" / "pushing" / "kernels" / "push_vxb_analytic"
    cuda = kernel / "push_vxb_analytic_cuda.cu"
    text = cuda.read_text()
    cuda.write_text(text.replace("push_vxb_analytic(double dt, int stage,", "push_vxb_analytic(int stage, double dt,"))
    result = run("check-signatures", copy, cwd=tmp_path, check=1)
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout
    assert re.fullmatch(r"struphy/pic/pushing/kernels/push_vxb_analytic/push_vxb_analytic_cuda\.cu:\d+: error: "
                        r"kernel 'push_vxb_analytic': the host kernel takes \(dt, stage, args_markers, .*\), "
                        r"the CUDA kernel \(stage, dt, args_markers, .*\)", lines[0]), lines[0]
    assert lines[1].startswith("struphy/pic/pushing/kernels/push_vxb_analytic/push_vxb_analytic_kernels.py:")


def test_status_of_struphy_counts_as_the_guide_does(run, struphy_tree, tmp_path):
    root = struphy_tree / "struphy"
    folders = sorted(kernel_folders(root), key=lambda f: ".".join(f.relative_to(root.parent).parts))
    missing = [f.name for f in folders if not (f / f"{f.name}_cuda.cu").exists()]
    expected = f"CUDA kernels: {len(folders) - len(missing)} of {len(folders)} (missing: {', '.join(missing[:10])}, ...)"
    result = run("status", "--cache-dir", tmp_path / "cache", root, check=0)
    lines = result.stdout.splitlines()
    assert lines[0] == expected
    rows = lines[3:lines.index("", 3)] if "" in lines[3:] else lines[3:]
    assert len(rows) == len(folders)
    # status starts no compiler: the reason is printed once under the table, not on each row
    assert result.stdout.count("run `cunumpy-kernels build` once") <= 2, result.stdout[-2000:]
    run("status", "--cache-dir", tmp_path / "cache", "--require-cuda", root, check=1)
    run("status", "--cache-dir", tmp_path / "cache", "--check-signatures", root, check=0)
