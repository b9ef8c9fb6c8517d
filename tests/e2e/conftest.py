"""Fixtures for the end-to-end tests: the built CLI, run on trees in temporary folders.

Every test points HOME and the cache into its own temporary folder: the user's
cache is never touched.
"""

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SOURCE_ROOT = Path(os.environ.get("CUNUMPY_KERNELS_SOURCE_ROOT", Path(__file__).resolve().parents[2]))
CLI = os.environ.get("CUNUMPY_KERNELS", str(SOURCE_ROOT / "build" / "tools" / "cunumpy-kernels"))
EXAMPLE = SOURCE_ROOT / "share" / "examples" / "particles"
# The interpreter meson runs pytest with (-Dpython, by default the project's
# .venv): the one whose Pyccel, NumPy and cunumpy the tests use.
PYTHON = sys.executable

# Struphy's published wheel, pinned: the figures the Struphy tests assert are
# this release's.
STRUPHY_WHEEL = "struphy-3.5.0-py3-none-any.whl"
STRUPHY_SHA256 = "d92cd8ba7522dcd67f486b097792f73154e5f478ea50eecf24400b1dc1f0d551"

# Drops the capabilities that let root ignore file modes, so that tests of
# unreadable files and read-only caches run as root (CI) too.
WITHOUT_FILE_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


# Outcomes of this pytest run, for the exit status below.
outcomes = {"passed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        outcomes["passed"] += 1
    elif report.skipped:
        outcomes["skipped"] += 1


def pytest_sessionfinish(session, exitstatus):
    """A file whose tests all skipped exits 77, which meson reports as skipped, never as passed."""
    if exitstatus == 0 and outcomes["skipped"] and not outcomes["passed"]:
        session.exitstatus = 77


class Runner:
    """Runs the CLI with an environment isolated in `home`."""

    def __init__(self, home: Path):
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.endswith("_KERNEL_CACHE")}
        # The CLI's default --python is python3 on PATH: the tests' interpreter.
        path = os.pathsep.join([str(Path(PYTHON).parent), self.env.get("PATH", os.defpath)])
        self.env.update(HOME=str(home), NO_COLOR="1", TMPDIR=str(home / "tmp"), PATH=path)
        (home / "tmp").mkdir(exist_ok=True)

    def __call__(self, *args, cwd=None, env=None, check=None, timeout=600, file_modes_bind=False):
        """Runs the CLI; `file_modes_bind` runs it without root's power to ignore file modes."""
        full_env = dict(self.env, **(env or {}))
        prefix = WITHOUT_FILE_OVERRIDE if file_modes_bind and os.geteuid() == 0 else []
        result = subprocess.run(
            [*prefix, CLI, *map(str, args)], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
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
    """Struphy 3.5.0's published wheel, checked against its SHA-256 and unpacked.

    Skips (and the file then reports skipped) only when the package registry
    cannot be reached; a wheel with another hash fails.
    """
    download = tmp_path_factory.mktemp("struphy-download")
    fetch = subprocess.run(
        [PYTHON, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet", "-d", str(download),
         "struphy==3.5.0"],
        capture_output=True, text=True, timeout=600,
    )
    wheel = download / STRUPHY_WHEEL
    if fetch.returncode != 0 or not wheel.is_file():
        pytest.skip(f"cannot download struphy 3.5.0 from the package registry:\n{fetch.stderr[-2000:]}")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert digest == STRUPHY_SHA256, f"{wheel.name} has SHA-256 {digest}, not the pinned {STRUPHY_SHA256}"
    tree = download / "tree"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tree)
    return tree


def status_rows(stdout):
    """status's table rows by kernel, each long reason ("see [1]") replaced by its note under the table."""
    notes = dict(line.split(" ", 1) for line in stdout.splitlines() if re.match(r"\[\d+\] ", line))
    rows = {}
    for line in stdout.splitlines()[3:]:
        if not line:
            break
        rows[line.split()[0]] = re.sub(r"see (\[\d+\])", lambda m: notes[m.group(1)], line)
    return rows


def process_scope() -> str:
    """What the tool names this machine and PID namespace in lock files and temporary names
    (process_scope in lib/util/temporary_name.hpp): host name, boot id, PID namespace."""
    with open("/proc/sys/kernel/random/boot_id") as boot:
        boot_id = boot.readline().strip()[:8]
    namespace = "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit())
    return f"{socket.gethostname()}~{boot_id}~{namespace}"
