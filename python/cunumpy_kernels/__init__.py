"""Where the cunumpy-kernels wheel installed the runtime library and what finds it.

The wheel puts the `cunumpy-kernels` tool on the environment's PATH and, inside
this package, the runtime library (lib/), its C++20 headers (include/), its
pkg-config file (lib/pkgconfig/) and its CMake package (lib/cmake/). A CMake
project finds the library with

    cmake -Dcunumpy-kernels_DIR=$(python -m cunumpy_kernels --cmakedir) ...

and a Meson one with PKG_CONFIG_PATH=$(python -m cunumpy_kernels --pkgconfigdir).
"""

from pathlib import Path

from ._version import __version__

__all__ = ["__version__", "cmakedir", "includedir", "libdir", "pkgconfigdir"]

_ROOT = Path(__file__).resolve().parent


def libdir() -> str:
    """The folder of libcunumpy-kernels.so.<major>, the runtime library."""
    return str(_ROOT / "lib")


def includedir() -> str:
    """The folder to add to the include path: it holds cunumpy_kernels/*.hpp."""
    return str(_ROOT / "include")


def pkgconfigdir() -> str:
    """The folder of cunumpy-kernels.pc, for PKG_CONFIG_PATH."""
    return str(_ROOT / "lib" / "pkgconfig")


def cmakedir() -> str:
    """The folder of cunumpy-kernelsConfig.cmake, for -Dcunumpy-kernels_DIR or CMAKE_PREFIX_PATH."""
    return str(_ROOT / "lib" / "cmake" / "cunumpy-kernels")
