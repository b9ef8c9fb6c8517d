"""Fixtures for the end-to-end tests: the built CLI, run on trees in temporary folders.

Every test points HOME and the cache into its own temporary folder: the user's
cache is never touched.
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SOURCE_ROOT = Path(os.environ.get("CUNUMPY_KERNELS_SOURCE_ROOT", Path(__file__).resolve().parents[2]))
CLI = os.environ.get("CUNUMPY_KERNELS", str(SOURCE_ROOT / "build" / "tools" / "cunumpy-kernels"))
EXAMPLE = SOURCE_ROOT / "share" / "examples" / "particles"


class Runner:
    """Runs the CLI with an environment isolated in `home`."""

    def __init__(self, home: Path):
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.endswith("_KERNEL_CACHE")}
        self.env.update(HOME=str(home), NO_COLOR="1", TMPDIR=str(home / "tmp"))
        (home / "tmp").mkdir(exist_ok=True)

    def __call__(self, *args, cwd=None, env=None, check=None, timeout=600):
        full_env = dict(self.env, **(env or {}))
        result = subprocess.run(
            [CLI, *map(str, args)], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
        )
        if check is not None:
            assert result.returncode == check, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        return result

    def json(self, *args, **kwargs):
        result = self(*args, "--json", **kwargs)
        return json.loads(result.stdout), result


@pytest.fixture
def run(tmp_path):
    return Runner(tmp_path / "home")


@pytest.fixture
def example(tmp_path):
    """A fresh copy of the bundled example package; returns its src/ folder."""
    target = tmp_path / "particles"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", "__pyccel__"))
    return target / "src"


def jobs_by_state(report, state):
    return [job for job in report["jobs"] if job["state"] == state]


@pytest.fixture(scope="module")
def struphy_tree(tmp_path_factory):
    """Struphy's published wheel (`pip download --no-deps struphy`), unpacked; skips when offline."""
    download = tmp_path_factory.mktemp("struphy-download")
    fetch = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(download), "struphy"],
        capture_output=True, text=True, timeout=600,
    )
    wheels = list(download.glob("struphy-*.whl"))
    if fetch.returncode != 0 or not wheels:
        pytest.skip(f"cannot download struphy from the package registry:\n{fetch.stderr[-2000:]}")
    tree = download / "tree"
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(tree)
    return tree
