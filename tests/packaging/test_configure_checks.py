"""A build that lacks a C++20 compiler, NVRTC's header or (for the tests) Python's development headers stops
at configure time, naming what is missing and how to get it (meson/requirements/meson.build)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_wheel import SOURCE_ROOT


def configure(tmp_path, *options, env=None):
    meson = shutil.which("meson", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if meson is None:
        pytest.skip("meson is not installed")
    result = subprocess.run([meson, "setup", tmp_path / "build", SOURCE_ROOT, *options],
                            env=dict(os.environ, **(env or {})), capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout + result.stderr


def script(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_compiler_without_cpp20_stops_configure_naming_the_compilers_to_install(tmp_path):
    # g++ held to C++17: the last -std wins over the project's -std=c++20.
    cxx = script(tmp_path / "g++17", '#!/bin/sh\nexec g++ "$@" -std=c++17\n')
    status, output = configure(tmp_path, "-Dtests=false", env={"CXX": str(cxx)})
    assert status != 0, output
    assert "does not compile C++20" in output and "GCC 11 or newer" in output, output
    assert "apt install g++-12" in output and "gcc-toolset-12" in output and "spack install gcc@12" in output


@pytest.mark.parametrize("present", [[], ["nvrtc.h"], ["nvrtc.h", "cuda.h"]])
def test_a_toolkit_without_one_of_its_headers_stops_configure_naming_the_header_and_the_option(tmp_path, present):
    toolkit = tmp_path / "cuda"
    (toolkit / "include").mkdir(parents=True)
    for header in present:
        (toolkit / "include" / header).write_text("/* empty */\n")
    missing = next(h for h in ["nvrtc.h", "cuda.h", "cudaTypedefs.h"] if h not in present)
    status, output = configure(tmp_path, "-Dtests=false", f"-Dtoolkit_root={toolkit}")
    assert status != 0, output
    assert f"{missing} not found under {toolkit}/include" in output, output
    assert "-Dtoolkit_root=DIR" in output and "spack install cuda" in output


@pytest.mark.parametrize("toolkit", ["no such folder", "a file", "no include"])
def test_a_toolkit_root_that_is_no_toolkit_stops_configure_naming_the_option(tmp_path, toolkit):
    root = tmp_path / toolkit
    if toolkit == "a file":
        root.write_text("")
    if toolkit == "no include":
        root.mkdir()
    status, output = configure(tmp_path, "-Dtests=false", f"-Dtoolkit_root={root}")
    assert status != 0, output
    assert f"-Dtoolkit_root={root} has no include/ folder" in output, output
    assert "the folder holding include/nvrtc.h" in output, output


def test_a_python_without_its_development_headers_stops_configure_when_the_tests_are_built(tmp_path):
    # An interpreter whose headers folder is empty, as without python3-dev.
    python = script(tmp_path / "python", f'#!/bin/sh\necho {tmp_path / "include"}\n')
    (tmp_path / "include").mkdir()
    status, output = configure(tmp_path, f"-Dpython={python}")
    assert status != 0, output
    assert f"Python.h not found in {tmp_path / 'include'}" in output, output
    assert "apt install python3-dev" in output and "dnf install python3-devel" in output and "-Dtests=false" in output
