"""python -m cunumpy_kernels --cmakedir | --pkgconfigdir | --includedir | --libdir | --version"""

import argparse
import sys

from . import __version__, cmakedir, includedir, libdir, pkgconfigdir

_FOLDERS = {
    "--cmakedir": (cmakedir, "the CMake package's folder (-Dcunumpy-kernels_DIR)"),
    "--pkgconfigdir": (pkgconfigdir, "the pkg-config file's folder (PKG_CONFIG_PATH)"),
    "--includedir": (includedir, "the headers' folder"),
    "--libdir": (libdir, "the runtime library's folder"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cunumpy_kernels",
                                     description="Where the cunumpy-kernels wheel installed the runtime library.")
    for flag, (_, help_text) in _FOLDERS.items():
        parser.add_argument(flag, action="store_true", help=help_text)
    parser.add_argument("--version", action="version", version=__version__)
    arguments = parser.parse_args(argv)
    asked = [function for flag, (function, _) in _FOLDERS.items() if getattr(arguments, flag[2:])]
    if not asked:
        parser.print_help(sys.stderr)
        return 2
    for function in asked:
        print(function())
    return 0


if __name__ == "__main__":
    sys.exit(main())
