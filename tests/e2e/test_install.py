"""The runtime library as an application finds it: this build installed with
`meson install` into a temporary folder, then a small application built
against the installed copy twice, by Meson through pkg-config and by CMake
through find_package, and run on the host, without a driver and over the
project's fake libcuda.so.1. Also what the installed library
links, exports and makes its users include.

No GPU is needed: without a driver the library runs host kernels.
"""

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SOURCE_ROOT

BUILD_DIR = os.environ.get("CUNUMPY_KERNELS_BUILD_DIR", str(SOURCE_ROOT / "build"))

# What the runtime may link (doc/runtime.md, "What the library links and why"):
# libcrypto and the C and C++ runtimes. libcuda and NVRTC are dlopened.
ALLOWED_NEEDED = {"libcrypto.so.3", "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6",
                  "ld-linux-x86-64.so.2"}
# A sanitizer build (scripts/test runs this suite on one) links their runtimes too.
SANITIZER_RUNTIME = re.compile(r"lib(asan|ubsan|lsan|tsan)\.so\.\d+")
# The exports the version script (lib/libcunumpy-kernels.map) lets through.
CK_SYMBOL = re.compile(r"(typeinfo for |typeinfo name for |vtable for )?ck::")

# A kernel package of two kernels, one with a CUDA port: its __global__
# declaration is read for the summary, never compiled here.
PACKAGE = {
    "demo/__init__.py": "",
    "demo/scale/scale_kernels.py": "def scale(x: 'float[:]', a: float, n: int):\n    x[:n] *= a\n",
    "demo/scale/scale_cuda.cu": (
        'extern "C" __global__ void scale(double* x, double a, int n)\n'
        "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= a;\n}\n"
    ),
    "demo/shift/shift_kernels.py": "def shift(x: 'float[:]', b: float, n: int):\n    x[:n] += b\n",
}

# The application: the package's kernels with C++ host kernels attached, run
# on a host array. It catches ck::UsageError by type across the library
# boundary (the type information is exported).
APPLICATION = r"""
#include <cunumpy_kernels/error.hpp>
#include <cunumpy_kernels/gpu.hpp>
#include <cunumpy_kernels/kernel_catalog.hpp>

#include <cstdio>
#include <vector>

namespace {
void scale(double* x, double a, long long n) { for (long long i = 0; i < n; ++i) x[i] *= a; }
void shift(double* x, double b, long long n) { for (long long i = 0; i < n; ++i) x[i] += b; }
}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) return 2;
    try {
        auto catalog = ck::KernelCatalog::from_package(argv[1]);
        catalog.attach_host("scale", ck::host_kernel(&scale));
        catalog.attach_host("shift", ck::host_kernel(&shift));
        std::printf("%s\n", catalog.summary().c_str());
        auto gpu = ck::Gpu::system();
        std::printf("gpu: %s\n", gpu->available() ? gpu->current_device().name.c_str() : "none");
        std::vector<double> x = {1, 2, 3, 4};
        long long n = static_cast<long long>(x.size());
        catalog["scale"](ck::host_array(x.data(), {n}), 2.0, n);
        catalog["shift"](ck::host_array(x.data(), {n}), 0.5, n);
        std::printf("%g %g %g %g\n", x[0], x[1], x[2], x[3]);
        catalog["unknown"];
    } catch (const ck::UsageError& error) {
        std::printf("usage error: %s\n", error.what());
    }
}
"""
EXPECTED_SUMMARY = "CUDA kernels: 1 of 2 (missing: shift)"
EXPECTED_RESULT = "2.5 4.5 6.5 8.5"
# The project's stand-in libcuda.so.1 (tests/fake_cuda), and the name its device reports.
FAKE_LIBCUDA_DIR = os.environ.get("CUNUMPY_KERNELS_FAKE_LIBCUDA_DIR", str(Path(BUILD_DIR) / "tests" / "fake_cuda"))
FAKE_DEVICE = "Fake libcuda device"


@functools.cache
def meson_command():
    """The meson that configured the build, from build.ninja's regenerate rule: another one (scripts/test
    puts the venv's newer meson first on PATH) cannot read the build's install data."""
    rule = re.search(r"^rule REGENERATE_BUILD\n command = (.+?) --internal regenerate ",
                     (Path(BUILD_DIR) / "build.ninja").read_text(), re.MULTILINE)
    return shlex.split(rule.group(1))


def introspection(name):
    return json.loads((Path(BUILD_DIR) / "meson-info" / f"intro-{name}.json").read_text())


def build_option(name):
    return next(option["value"] for option in introspection("buildoptions") if option["name"] == name)


def sanitizers():
    """The build's -Db_sanitize ('none' normally): the applications must use the same."""
    return build_option("b_sanitize")


def run_checked(command, env=None, timeout=120):
    result = subprocess.run([str(part) for part in command], env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{command}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def needed(binary):
    dynamic = run_checked(["readelf", "-d", binary]).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))


def need_tool(name):
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed (scripts/setup installs it)")


class Installed:
    """This build installed under `stage` (DESTDIR); `prefix` is the configured prefix inside it."""

    def __init__(self, stage: Path):
        self.stage = stage
        self.version = introspection("projectinfo")["version"]
        self.prefix = stage / build_option("prefix").lstrip("/")
        self.libdir = self.prefix / build_option("libdir")
        self.library = self.libdir / f"libcunumpy-kernels.so.{self.version}"
        self.soname = f"libcunumpy-kernels.so.{self.version.split('.')[0]}"
        self.include = self.prefix / build_option("includedir") / "cunumpy_kernels"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Installed once for the file, as a user installs it (the build's own prefix and libdir)."""
    stage = tmp_path_factory.mktemp("stage")
    run_checked([*meson_command(), "install", "-C", BUILD_DIR, "--no-rebuild", "--quiet", "--destdir", stage])
    return Installed(stage)


@pytest.fixture
def application(tmp_path):
    """The application's source and the kernel package it opens: (source folder, package folder)."""
    for name, text in PACKAGE.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(text)
    source = tmp_path / "app"
    source.mkdir()
    (source / "app.cpp").write_text(APPLICATION)
    return source, tmp_path / "src" / "demo"


def tool_env(**variables):
    # g++, as the library was built with; the host backend, so that a machine
    # with a GPU runs the same path.
    return dict(os.environ, CXX="g++", CUNUMPY_BACKEND="numpy", **{k: str(v) for k, v in variables.items()})


def run_application(executable, installed, package, driver_dir=None):
    """Runs the application; with `driver_dir`, over the libcuda.so.1 found there. Returns its gpu line."""
    path = f"{driver_dir}:{installed.libdir}" if driver_dir else installed.libdir
    result = run_checked([executable, package], env=tool_env(LD_LIBRARY_PATH=path))
    lines = result.stdout.splitlines()
    assert lines[0] == EXPECTED_SUMMARY, result.stdout
    assert lines[1].startswith("gpu: "), result.stdout
    assert lines[2] == EXPECTED_RESULT, result.stdout
    assert lines[3].startswith("usage error: ") and "unknown" in lines[3], result.stdout
    # Linked by soname, so that a newer library of the same major version replaces it in place.
    assert installed.soname in needed(executable)
    return lines[1]


def test_meson_application_finds_the_library_through_pkg_config(installed, application, tmp_path):
    need_tool("pkg-config")
    source, package = application
    (source / "meson.build").write_text(
        "project('app', 'cpp', default_options : ['cpp_std=c++20'])\n"
        "executable('app', 'app.cpp', dependencies : dependency('cunumpy-kernels'))\n"
    )
    # Only the installed .pc, and its paths inside the stage: pkg-config's
    # standard way to use a tree installed with DESTDIR.
    env = tool_env(PKG_CONFIG_LIBDIR=installed.libdir / "pkgconfig", PKG_CONFIG_SYSROOT_DIR=installed.stage)
    requires = run_checked(["pkg-config", "--print-requires", "--print-requires-private", "cunumpy-kernels"], env=env)
    assert requires.stdout.strip() == "", "the library's users need nothing but it"
    build = tmp_path / "build-meson"
    sanitize = ["-Db_sanitize=" + sanitizers(), "-Db_lundef=false"] if sanitizers() != "none" else []
    run_checked([*meson_command(), "setup", build, source, *sanitize], env=env)
    run_checked([*meson_command(), "compile", "-C", build], env=env)
    run_application(build / "app", installed, package)
    # The same binary over a driver: the library opens libcuda.so.1 at run time
    # (it does not link it), so the driver found on the path is the one used.
    fake = Path(FAKE_LIBCUDA_DIR) / "libcuda.so.1"
    assert fake.exists(), f"{fake} is missing: build the tests (ninja -C build)"
    assert run_application(build / "app", installed, package, driver_dir=FAKE_LIBCUDA_DIR) == "gpu: " + FAKE_DEVICE


def test_cmake_application_finds_the_library_through_find_package(installed, application, tmp_path):
    need_tool("cmake")
    source, package = application
    major = int(installed.version.split(".")[0])
    # No CMAKE_CXX_STANDARD: the imported target asks for C++20 itself.
    (source / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.16)
project(app CXX)
find_package(cunumpy-kernels {major + 1} QUIET)
if(cunumpy-kernels_FOUND)
  message(FATAL_ERROR "cunumpy-kernels {major + 1} requested, ${{cunumpy-kernels_VERSION}} accepted")
endif()
find_package(cunumpy-kernels {installed.version} REQUIRED)
get_target_property(location cunumpy-kernels::cunumpy-kernels IMPORTED_LOCATION)
message(STATUS "cunumpy-kernels ${{cunumpy-kernels_VERSION}} in ${{cunumpy-kernels_DIR}}: ${{location}}")
add_executable(app app.cpp)
target_link_libraries(app PRIVATE cunumpy-kernels::cunumpy-kernels)
""")
    build = tmp_path / "build-cmake"
    sanitize = [f"-DCMAKE_CXX_FLAGS=-fsanitize={sanitizers()}"] if sanitizers() != "none" else []
    configure = run_checked(["cmake", "-S", source, "-B", build, f"-DCMAKE_PREFIX_PATH={installed.prefix}", *sanitize],
                            env=tool_env())
    # The staged copy, its paths relative to its own folder: none installed on the machine.
    found = f"cunumpy-kernels {installed.version} in {installed.libdir / 'cmake' / 'cunumpy-kernels'}: {installed.library}"
    assert found in configure.stdout, configure.stdout
    run_checked(["cmake", "--build", build], env=tool_env())
    run_application(build / "app", installed, package)


def test_installed_library_links_only_libcrypto_and_the_c_and_cpp_runtimes(installed):
    linked = needed(installed.library)
    if sanitizers() != "none":
        linked = {name for name in linked if not SANITIZER_RUNTIME.fullmatch(name)}
    assert linked <= ALLOWED_NEEDED, f"links more than it says: {sorted(linked - ALLOWED_NEEDED)}"


def test_installed_library_exports_only_namespace_ck(installed):
    symbols = run_checked(["nm", "-D", "--defined-only", installed.library]).stdout.splitlines()
    names = [line.split()[-1] for line in symbols if line.strip()]
    demangled = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                               check=True).stdout.splitlines()
    outside = [name for name in demangled if not CK_SYMBOL.match(name)]
    assert not outside, f"exported outside namespace ck: {outside[:20]}"
    assert any(name.startswith("ck::KernelCatalog::from_package") for name in demangled)
    assert any(name.startswith("ck::KernelCatalog::from_bundle") for name in demangled)


def exported_names(library):
    symbols = run_checked(["nm", "-D", "--defined-only", library]).stdout.splitlines()
    names = [line.split()[-1] for line in symbols if line.strip()]
    return subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                          check=True).stdout.splitlines()


# `CK_API <return type> name(`: a free function of the public headers.
DECLARED_FUNCTION = re.compile(r"\bCK_API\s+(?:[\w:<>,\s*&]+?)\b(\w+)\s*\(")
# `class CK_API Name` or `struct CK_API Name`: a type whose members the library defines.
# Except these, whose every member is defined in the header.
HEADER_ONLY_TYPES = {"HostKernel"}  # kernel.hpp: a callable wrapped by templates
DECLARED_TYPE = re.compile(r"\b(?:class|struct)\s+CK_API\s+(\w+)")


def test_installed_library_defines_every_function_and_type_its_headers_declare(installed):
    """An application linking a declared function links: nothing in include/ is left to the tool."""
    exported = exported_names(installed.library)
    functions, types = set(), set()
    for header in sorted((SOURCE_ROOT / "include" / "cunumpy_kernels").glob("*.hpp")):
        text = re.sub(r"//[^\n]*", "", header.read_text())
        functions |= {name for name in DECLARED_FUNCTION.findall(text) if name != "define"}
        types |= set(DECLARED_TYPE.findall(text))
    assert "kernels_of_paths" in functions and "KernelCatalog" in types  # the parse found the declarations
    # A function of a nested namespace (ck::detail) or with an ABI tag (`name[abi:cxx11]()`) counts.
    def defines(function):
        pattern = re.compile(rf"ck::(\w+::)*{function}(\[abi:\w+\])*\(")
        return any(pattern.match(name) for name in exported)

    missing = sorted(f for f in functions if not defines(f))
    missing += sorted(t for t in types - HEADER_ONLY_TYPES
                      if not any(name.startswith(f"ck::{t}::") or name.endswith(f" for ck::{t}") for name in exported))
    assert not missing, f"declared in include/ but not exported by {installed.library}: {missing}"


def test_installed_cli_loads_libarchive_only_when_an_archive_is_used(installed):
    """libarchive and its ten dependencies cost every command about 2 ms of start-up: status,
    build and the pre-commit hook start without them; cache export and import load them."""
    cli = installed.prefix / build_option("bindir") / "cunumpy-kernels"
    assert not any(name.startswith("libarchive") for name in needed(cli)), sorted(needed(cli))


def test_installed_cli_allocates_with_mimalloc_where_the_build_found_it(installed):
    """mimalloc replaces malloc in the CLI only (-Dmimalloc, on where libmimalloc-dev is installed,
    off in sanitizer builds); the library applications link keeps their allocator."""
    cli = installed.prefix / build_option("bindir") / "cunumpy-kernels"
    found = Path("/usr/include/mimalloc.h").exists() and build_option("mimalloc") != "disabled"
    expected = found and sanitizers() == "none"
    assert any(name.startswith("libmimalloc") for name in needed(cli)) == expected, sorted(needed(cli))
    stats = run_checked([cli, "--version"], env=dict(os.environ, MIMALLOC_SHOW_STATS="1"))
    assert ("heap stats" in stats.stderr) == expected


def test_installed_headers_include_only_their_own_and_standard_headers(installed):
    """So an application needs no nlohmann, spdlog, fmt, toml++ or libarchive headers."""
    headers = sorted(path for path in installed.include.rglob("*") if path.is_file())
    assert installed.include / "kernel_catalog.hpp" in headers
    for header in headers:
        for target in re.findall(r'^\s*#\s*include\s*([<"][^>"]+[>"])', header.read_text(), re.MULTILINE):
            own = re.fullmatch(r'"cunumpy_kernels/\w+\.hpp"', target)
            standard = re.fullmatch(r"<\w+>", target)
            assert own or standard, f"{header.relative_to(installed.include)} includes {target}"
