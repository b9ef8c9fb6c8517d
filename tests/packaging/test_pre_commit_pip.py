"""The pip-installed pre-commit hook (share/pre-commit-pip, the mirror repository's content), run by the real
pre-commit on a scratch git project with a fresh HOME: pre-commit pip-installs the mirror and the built wheel
(given as the hook's additional_dependencies) into the hook's own environment. Nothing else provides the
tool: PATH holds only the system's folders, and CUNUMPY_KERNELS is unset.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_wheel import EXAMPLE, SOURCE_ROOT, wheel  # noqa: F401 (the wheel fixture)

PUSH_CUDA = "src/particles/kernels/push/push_cuda.cu"


def git(cwd, *args, env, check=True):
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert result.returncode == 0, f"git {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result


def test_the_pip_hook_installs_the_wheel_and_refuses_a_commit_that_breaks_a_signature(tmp_path, wheel):  # noqa: F811
    # pre-commit of the tests' interpreter (scripts/setup installs it into .venv), run as a module so
    # that a copied .venv (.ci/run, as nobody) works too.
    pre_commit = [sys.executable, "-m", "pre_commit"]
    home = tmp_path / "home"
    home.mkdir()
    keep = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT", "HTTPS_PROXY", "HTTP_PROXY",
            "https_proxy", "http_proxy", "NO_PROXY", "no_proxy", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
    env = {name: os.environ[name] for name in keep if name in os.environ} | {
        "HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"), "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1",
        "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.org",
        "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.org"}
    assert shutil.which("cunumpy-kernels", path=env["PATH"]) is None, "a cunumpy-kernels on PATH would hide the hook's"

    mirror = tmp_path / "mirror"
    shutil.copytree(SOURCE_ROOT / "share" / "pre-commit-pip", mirror)
    git(mirror, "init", "-q", env=env)
    git(mirror, "add", ".", env=env)
    git(mirror, "commit", "-q", "-m", "mirror", env=env)
    rev = git(mirror, "rev-parse", "HEAD", env=env).stdout.strip()

    project = tmp_path / "particles"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", "__pyccel__"))
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {mirror}\n    rev: {rev}\n    hooks:\n      - id: check-signatures\n"
        f"        additional_dependencies: ['{wheel}']\n")
    git(project, "init", "-q", env=env)
    installed = subprocess.run([*pre_commit, "install"], cwd=project, env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    git(project, "add", ".", env=env)
    first = git(project, "commit", "-m", "the example package", env=env, check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "kernel signatures" in first.stdout + first.stderr and "Passed" in first.stdout + first.stderr

    cuda = project / PUSH_CUDA
    cuda.write_text(cuda.read_text().replace("double dt, double length", "double length, double dt"))
    git(project, "add", PUSH_CUDA, env=env)
    refused = git(project, "commit", "-m", "swap two parameters", env=env, check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Failed" in output, output
    assert ("kernel 'push': the host kernel takes (x, v, e, dt, length, n), "
            "the CUDA kernel (x, v, e, length, dt, n)") in output
    # The tool the hook ran is the wheel's, in pre-commit's environment for the hook.
    tools = list((tmp_path / "pre-commit-cache").glob("repo*/py_env-*/bin/cunumpy-kernels"))
    assert len(tools) == 1, tools
