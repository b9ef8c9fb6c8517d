"""The shipped pre-commit hook, run by the real pre-commit on a temporary git repository."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, PYTHON, SOURCE_ROOT

PUSH_CUDA = "src/particles/kernels/push/push_cuda.cu"


def find_pre_commit():
    """The pre-commit beside the tests' interpreter (scripts/setup installs it into .venv)."""
    pre_commit = Path(PYTHON).parent / "pre-commit"
    assert pre_commit.exists(), f"{pre_commit} is missing: scripts/setup installs pre-commit into .venv"
    return str(pre_commit)


def git(cwd, *args, env, check=True):
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if check:
        assert result.returncode == 0, f"git {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "HOME": str(home),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"),
        "CUNUMPY_KERNELS": CLI,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.org",
        "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.org",
        "NO_COLOR": "1",
    }


@pytest.fixture
def hook_repository(tmp_path, env):
    """A repository holding exactly this checkout's hook definition and script, as pre-commit clones it."""
    repo = tmp_path / "hooks"
    (repo / "share" / "hooks").mkdir(parents=True)
    shutil.copy2(SOURCE_ROOT / ".pre-commit-hooks.yaml", repo)
    shutil.copy2(SOURCE_ROOT / "share" / "hooks" / "check-signatures", repo / "share" / "hooks")
    git(repo, "init", "-q", env=env)
    git(repo, "add", ".", env=env)
    git(repo, "commit", "-q", "-m", "hooks", env=env)
    return repo, git(repo, "rev-parse", "HEAD", env=env).stdout.strip()


def commit_with_hook(project, env, hook_repository, message):
    """Makes `project` a git repository whose pre-commit runs the hook, commits everything; returns the commit's result."""
    repo, rev = hook_repository
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: check-signatures\n")
    git(project, "init", "-q", env=env)
    install = subprocess.run([find_pre_commit(), "install"], cwd=project, env=env, capture_output=True, text=True,
                             timeout=300)
    assert install.returncode == 0, install.stderr
    git(project, "add", ".", env=env)
    return git(project, "commit", "-m", message, env=env, check=False)


def test_a_commit_that_breaks_a_signature_is_refused_and_the_fix_passes(tmp_path, env, example, hook_repository):
    project = example.parent
    first = commit_with_hook(project, env, hook_repository, "the example package")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Passed" in first.stdout + first.stderr

    cuda = project / PUSH_CUDA
    original = cuda.read_text()
    cuda.write_text(original.replace("double dt, double length", "double length, double dt"))
    git(project, "add", PUSH_CUDA, env=env)
    refused = git(project, "commit", "-m", "swap two parameters", env=env, check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "Failed" in output
    assert ("kernel 'push': the host kernel takes (x, v, e, dt, length, n), "
            "the CUDA kernel (x, v, e, length, dt, n)") in output
    assert git(project, "rev-list", "--count", "HEAD", env=env).stdout.strip() == "1"

    cuda.write_text(original.replace("long long n)", "long long n /* markers */)"))
    git(project, "add", PUSH_CUDA, env=env)
    fixed = git(project, "commit", "-m", "document n", env=env, check=False)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert git(project, "rev-list", "--count", "HEAD", env=env).stdout.strip() == "2"


def one_kernel_project(root, host_suffix, swapped=False):
    """A package whose pyproject.toml sets its own host suffix, with one kernel `scale`."""
    (root / "src" / root.name / "kernels" / "scale").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(f'[tool.cunumpy-kernels]\nhost-suffix = "{host_suffix}"\n')
    folder = root / "src" / root.name / "kernels" / "scale"
    (folder / f"scale{host_suffix}.py").write_text("def scale(x, a, n):\n    pass\n")
    params = "double a, double* x, int n" if swapped else "double* x, double a, int n"
    (folder / "scale_cuda.cu").write_text(f'extern "C" __global__ void scale({params}) {{}}\n')
    return folder


def test_as_a_hook_deleted_paths_are_skipped_and_each_package_uses_its_own_pyproject(tmp_path, env, hook_repository):
    pre_commit = find_pre_commit()
    project = tmp_path / "mono"
    project.mkdir()
    alpha = one_kernel_project(project / "alpha", "_kernels")
    beta = one_kernel_project(project / "beta", "_host")
    first = commit_with_hook(project, env, hook_repository, "two packages")
    assert first.returncode == 0, first.stdout + first.stderr

    # beta's kernel is read with beta's suffix: a swap there is found, whatever alpha's config says.
    one_kernel_project(project / "beta", "_host", swapped=True)
    git(project, "add", ".", env=env)
    refused = git(project, "commit", "-m", "swap in beta", env=env, check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "the host kernel takes (x, a, n), the CUDA kernel (a, x, n)" in output, output
    git(project, "reset", "-q", "--hard", env=env)

    # A path that is gone (deleted or renamed in the change): pre-commit drops it
    # itself; a script that feeds the hook `git diff --name-only` does not. Both
    # check the others.
    gone = alpha / "gone_cuda.cu"
    paths = [str(gone.relative_to(project)), str((beta / "scale_cuda.cu").relative_to(project))]
    result = subprocess.run([pre_commit, "run", "check-signatures", "--verbose", "--files", *paths],
                            cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check-signatures: 1 kernel, 1 with more than one implementation: all agree" in result.stdout
    hook = subprocess.run([str(SOURCE_ROOT / "share" / "hooks" / "check-signatures"), *paths], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert hook.returncode == 0, hook.stdout + hook.stderr
    assert "does not exist (deleted or renamed): skipped" in hook.stdout + hook.stderr
    assert "1 kernel, 1 with more than one implementation: all agree" in hook.stdout + hook.stderr


def test_a_header_change_is_checked_against_the_kernels_that_include_it(tmp_path, env, hook_repository):
    project = tmp_path / "headers"
    folder = one_kernel_project(project, "_kernels")
    package = project / "src" / "headers"
    (package / "__init__.py").write_text("")
    (package / "kernels" / "__init__.py").write_text("")
    (package / "kernels" / "common.cuh").write_text("#define SCALE_ARGS double* x, double a, int n\n")
    (folder / "scale_cuda.cu").write_text('#include "headers/kernels/common.cuh"\n'
                                          'extern "C" __global__ void scale(SCALE_ARGS) {}\n')
    first = commit_with_hook(project, env, hook_repository, "a kernel whose parameters come from a header")
    assert first.returncode == 0, first.stdout + first.stderr

    (package / "kernels" / "common.cuh").write_text("#define SCALE_ARGS double* x, double b, int n\n")
    git(project, "add", ".", env=env)
    refused = git(project, "commit", "-m", "rename a in the header only", env=env, check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "kernel 'scale': the host kernel takes (x, a, n), the CUDA kernel (x, b, n)" in output


DATA_WRITER = '''
import json, os
from cunumpy.arguments import CudaStruct, write_cuda_header


def write_args_header(path):
    with open(os.path.join(os.path.dirname(__file__), "fields.json")) as f:
        fields = [tuple(field) for field in json.load(f)]
    write_cuda_header(path, [CudaStruct("Args", fields)], guard="SIM_ARGS_CUH")
'''


def test_a_commit_of_any_file_a_struct_header_writer_reads_is_checked(tmp_path, env, hook_repository):
    # A writer may read any file (data, the config): the hook runs on every commit, whatever it
    # touches, and the struct headers are checked (warm: only when a file their writers read changed).
    from test_struct_abi import KERNEL_WITH_HEADER, struct_tree, write_header
    project = tmp_path / "project"
    tree = struct_tree(project, KERNEL_WITH_HEADER)
    (tree / "sim" / "cuda_arguments.py").write_text(DATA_WRITER)
    fields = tree / "sim" / "fields.json"
    fields.write_text('[["x", "double*"], ["n", "long long"], ["scale", "float"]]')
    write_header(project)
    first = commit_with_hook(project, env, hook_repository, "a package with a struct header")
    assert first.returncode == 0, first.stdout + first.stderr

    fields.write_text('[["x", "double*"], ["n", "int"], ["scale", "float"]]')
    git(project, "add", fields, env=env)
    refused = git(project, "commit", "-m", "n becomes an int", env=env, check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "differs from what sim.cuda_arguments:write_args_header writes" in output, output

    write_header(project)  # the fix: the header regenerated
    git(project, "add", ".", env=env)
    fixed = git(project, "commit", "-m", "n becomes an int, header regenerated", env=env, check=False)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
