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


def test_a_commit_that_breaks_a_signature_is_refused_and_the_fix_passes(tmp_path, env, example, hook_repository):
    pre_commit = find_pre_commit()
    project = example.parent
    repo, rev = hook_repository
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: check-signatures\n")
    git(project, "init", "-q", env=env)
    install = subprocess.run([pre_commit, "install"], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    git(project, "add", ".", env=env)
    first = git(project, "commit", "-m", "the example package", env=env, check=False)
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
