"""The wheel as a user gets it: installed with pip, without an index, into a fresh virtual environment,
then used only through what it installed: the CLI on PATH, `python -m cunumpy_kernels`, and a C++
application built against the wheel's library by CMake (--cmakedir) and by Meson (PKG_CONFIG_PATH).

The wheel is $CUNUMPY_KERNELS_WHEEL (.ci/run builds it once); without it this file builds one with
`pip wheel` (minutes). Runs as any user: .ci/run runs it as nobody.
"""

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SOURCE_ROOT = Path(os.environ.get("CUNUMPY_KERNELS_SOURCE_ROOT", Path(__file__).resolve().parents[2]))
EXAMPLE = SOURCE_ROOT / "share" / "examples" / "particles"
# What an installed binary may load from outside the wheel: the C and C++ runtimes (README, "Install").
# libcuda and NVRTC are dlopened, never linked.
RUNTIMES = re.compile(r"(libc|libm|libdl|libpthread|librt)\.so\.\d+|libstdc\+\+\.so\.6|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2")
# One program of the public API (a catalog over a kernel package, a host kernel called), built by each consumer.
APPLICATION = r"""
#include <cunumpy_kernels/kernel_catalog.hpp>
#include <cstdio>
#include <vector>
namespace { void scale(double* x, double a, long long n) { for (long long i = 0; i < n; ++i) x[i] *= a; } }
int main(int, char** argv)
{
    auto catalog = ck::KernelCatalog::from_package(argv[1]);
    catalog.attach_host("scale", ck::host_kernel(&scale));
    std::vector<double> x = {1, 2};
    catalog["scale"](ck::host_array(x.data(), {2}), 3.0, 2LL);
    std::printf("%s\n%g %g\n", catalog.summary().c_str(), x[0], x[1]);
}
"""
PACKAGE = {"demo/__init__.py": "", "demo/scale/scale_kernels.py": "def scale(x: 'float[:]', a: float, n: int):\n    x[:n] *= a\n"}
EXPECTED_OUTPUT = "CUDA kernels: 0 of 1 (missing: scale)\n3 6\n"


def run(command, env=None, cwd=None, check=True, timeout=600):
    result = subprocess.run([str(part) for part in command], env=env, cwd=cwd, capture_output=True, text=True,
                            timeout=timeout)
    if check:
        assert result.returncode == 0, f"{command}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def project_version():
    return re.search(r"version : '([^']+)'", (SOURCE_ROOT / "meson.build").read_text()).group(1)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    given = os.environ.get("CUNUMPY_KERNELS_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", out, SOURCE_ROOT],
        timeout=3600)
    return next(out.glob("cunumpy_kernels-*.whl"))


class Venv:
    """A fresh virtual environment with the wheel pip-installed into it."""

    def __init__(self, root: Path):
        self.root = root
        self.bin = root / "bin"
        self.python = self.bin / "python"
        self.cli = self.bin / "cunumpy-kernels"
        # Only the environment's bin and the system's: nothing of the build or the project's .venv.
        self.env = {"PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin", "HOME": str(root / "home"), "NO_COLOR": "1",
                    "LANG": "C.UTF-8"}
        (root / "home").mkdir(exist_ok=True)

    def module(self, *args):
        return run([self.python, "-m", "cunumpy_kernels", *args], env=self.env).stdout.strip()


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory):
    root = tmp_path_factory.mktemp("venv") / "env"
    run([sys.executable, "-m", "venv", root])
    environment = Venv(root)
    run([environment.python, "-m", "pip", "install", "--no-index", "--quiet", wheel], env=environment.env)
    return environment


def needed_and_runpath(binary):
    dynamic = run(["readelf", "-d", binary]).stdout
    return (set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)),
            re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]+)\]", dynamic))


def test_the_wheel_holds_the_tool_library_headers_consumer_files_man_pages_and_completion(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    data = f"cunumpy_kernels-{project_version()}.data"
    major = project_version().split(".")[0]
    for expected in [f"{data}/scripts/cunumpy-kernels",
                     f"{data}/purelib/cunumpy_kernels/lib/libcunumpy-kernels.so.{major}",
                     f"{data}/purelib/cunumpy_kernels/include/cunumpy_kernels/kernel_catalog.hpp",
                     f"{data}/purelib/cunumpy_kernels/lib/pkgconfig/cunumpy-kernels.pc",
                     f"{data}/purelib/cunumpy_kernels/lib/cmake/cunumpy-kernels/cunumpy-kernelsConfig.cmake",
                     f"{data}/purelib/cunumpy_kernels/lib/cmake/cunumpy-kernels/cunumpy-kernelsConfigVersion.cmake",
                     f"{data}/purelib/cunumpy_kernels/__main__.py",
                     f"{data}/data/share/man/man1/cunumpy-kernels.1",
                     f"{data}/data/share/man/man5/cunumpy-kernels.5",
                     f"{data}/data/share/bash-completion/completions/cunumpy-kernels"]:
        assert expected in names, f"{expected} is not in {wheel.name}:\n" + "\n".join(names)
    # Any Python 3: no extension module in it.
    assert re.fullmatch(r"cunumpy_kernels-[^-]+-py3-none-(linux|manylinux[^-]*)_x86_64\.whl", wheel.name), wheel.name


def test_one_version_for_the_wheel_cli_module_soname_pkg_config_cmake_and_pre_commit_mirror(wheel, venv):
    version = project_version()
    assert wheel.name.split("-")[1] == version
    assert run([venv.cli, "--version"], env=venv.env).stdout.split()[-1] == version
    assert venv.module("--version") == version
    libdir = Path(venv.module("--libdir"))
    library = libdir / f"libcunumpy-kernels.so.{version.split('.')[0]}"
    soname = re.search(r"soname: \[([^\]]+)\]", run(["readelf", "-d", library]).stdout).group(1)
    assert soname == library.name
    pc = (Path(venv.module("--pkgconfigdir")) / "cunumpy-kernels.pc").read_text()
    assert f"\nVersion: {version}\n" in pc
    cmake_version = (Path(venv.module("--cmakedir")) / "cunumpy-kernelsConfigVersion.cmake").read_text()
    assert f'set(PACKAGE_VERSION "{version}")' in cmake_version
    mirror = (SOURCE_ROOT / "share" / "pre-commit-pip" / "pyproject.toml").read_text()
    assert f'version = "{version}"' in mirror and f'"cunumpy-kernels=={version}"' in mirror


def test_the_module_names_its_folders_as_flags_and_functions(venv):
    flags = ["--cmakedir", "--pkgconfigdir", "--includedir", "--libdir"]
    by_flag = {flag: venv.module(flag) for flag in flags}
    code = "import cunumpy_kernels as c; print(c.cmakedir(), c.pkgconfigdir(), c.includedir(), c.libdir())"
    by_function = run([venv.python, "-c", code], env=venv.env).stdout.split()
    assert by_function == [by_flag[flag] for flag in flags]
    for folder in by_flag.values():
        assert Path(folder).is_dir() and Path(folder).is_relative_to(venv.root), folder
    assert (Path(by_flag["--includedir"]) / "cunumpy_kernels" / "kernel_catalog.hpp").is_file()
    no_flag = run([venv.python, "-m", "cunumpy_kernels"], env=venv.env, check=False)
    assert no_flag.returncode == 2 and "--cmakedir" in no_flag.stderr


def test_installed_binaries_load_nothing_outside_the_wheel_but_the_c_and_cpp_runtimes(venv):
    library = Path(venv.module("--libdir")) / f"libcunumpy-kernels.so.{project_version().split('.')[0]}"
    for binary in [venv.cli, library]:
        needed, runpath = needed_and_runpath(binary)
        assert {name for name in needed if not RUNTIMES.fullmatch(name)} == set(), f"{binary}: {sorted(needed)}"
        assert runpath == [], f"{binary} searches {runpath}"
        # As the loader resolves them on this machine: each from the system's runtime folders.
        for line in run(["ldd", binary]).stdout.splitlines():
            assert "not found" not in line, line
            assert not re.search(r"=> /(?!lib|usr/lib)", line), line


def test_installed_cli_builds_reports_and_checks_the_example(venv, tmp_path):
    source = tmp_path / "particles"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__", "__pyccel__"))
    src = source / "src"
    cache = ["--cache-dir", tmp_path / "cache"]
    # The CUDA kernels with NVRTC (dlopened from the toolkit): cunumpy's CUDA headers come with cunumpy.
    include = run([sys.executable, "-c", "import cunumpy, pathlib; print(pathlib.Path(cunumpy.__file__).parent / 'cuda' / 'include')"],
                  check=False)
    if include.returncode != 0:
        pytest.skip("cunumpy is not installed beside the tests (scripts/setup installs it)")
    headers = ["--cunumpy-include-dir", include.stdout.strip()]
    built = run([venv.cli, "build", "--only", "cuda", *cache, *headers, src], env=venv.env, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    status = run([venv.cli, "status", *cache, *headers, src], env=venv.env, check=False)
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.startswith("CUDA kernels: 2 of 3"), status.stdout
    checked = run([venv.cli, "check-signatures", src], env=venv.env, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.fixture
def application(tmp_path):
    for name, text in PACKAGE.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(text)
    source = tmp_path / "app"
    source.mkdir()
    (source / "app.cpp").write_text(APPLICATION)
    return source, tmp_path / "src" / "demo"


def check_application(executable, package, env):
    result = run([executable, package], env=dict(env, CUNUMPY_BACKEND="numpy"))
    assert result.stdout == EXPECTED_OUTPUT
    needed, _ = needed_and_runpath(executable)
    assert f"libcunumpy-kernels.so.{project_version().split('.')[0]}" in needed


def test_a_cmake_application_finds_the_wheels_library_through_the_modules_cmakedir(venv, application, tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed (pip install cmake)")
    source, package = application
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(app CXX)\n"
        f"find_package(cunumpy-kernels {project_version()} REQUIRED)\n"
        "add_executable(app app.cpp)\ntarget_link_libraries(app PRIVATE cunumpy-kernels::cunumpy-kernels)\n")
    build = tmp_path / "build-cmake"
    run([cmake, "-S", source, "-B", build, f"-Dcunumpy-kernels_DIR={venv.module('--cmakedir')}"], env=venv.env)
    run([cmake, "--build", build], env=venv.env)
    # CMake's build tree RPATH names the wheel's lib folder: no LD_LIBRARY_PATH.
    check_application(build / "app", package, venv.env)


def test_a_meson_application_finds_the_wheels_library_through_pkg_config_path(venv, application, tmp_path):
    meson = shutil.which("meson", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if meson is None or shutil.which("pkg-config") is None:
        pytest.skip("meson or pkg-config is not installed")
    source, package = application
    (source / "meson.build").write_text(
        "project('app', 'cpp', default_options : ['cpp_std=c++20'])\n"
        "executable('app', 'app.cpp', dependencies : dependency('cunumpy-kernels'))\n")
    env = dict(venv.env, PKG_CONFIG_PATH=venv.module("--pkgconfigdir"))
    cflags = run(["pkg-config", "--cflags", "--libs", "cunumpy-kernels"], env=env).stdout
    assert str(Path(venv.module("--includedir"))) in cflags.replace("lib/pkgconfig/../../", "")
    build = tmp_path / "build-meson"
    run([meson, "setup", build, source], env=env)
    run([meson, "compile", "-C", build], env=env)
    check_application(build / "app", package, dict(venv.env, LD_LIBRARY_PATH=venv.module("--libdir")))
