#!/usr/bin/env python3
"""Checks that the project's C++ is as clang-format 14 writes it (.clang-format).

Usage: scripts/check_format.py [--fix]. Without --fix, lists each file that
differs with the first changed lines and exits 1; with --fix, rewrites them.
The checked files: every tracked .cpp and .hpp under include/, lib/, tools/,
tests/ and bench/ (the example kernels and fixtures keep their own style).
"""

import difflib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ["include", "lib", "tools", "tests", "bench"]


def clang_format():
    # Each clang-format release formats a little differently: only 14's output is the project's.
    for name in ("clang-format-14", "clang-format"):
        path = shutil.which(name)
        if path and " version 14." in subprocess.run([path, "--version"], capture_output=True, text=True).stdout:
            return path
    sys.exit("check_format: clang-format 14 is not installed: apt-get install clang-format-14 "
             "(scripts/setup installs it), or pip install clang-format==14.0.6")


def checked_files():
    listed = subprocess.run(["git", "ls-files", "--", *FOLDERS], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / name for name in listed.stdout.splitlines()
            if name.endswith((".cpp", ".hpp")) and "/cubins/" not in name]


def main():
    fix = "--fix" in sys.argv[1:]
    tool = clang_format()
    differing = []
    for path in checked_files():
        if not path.exists():
            continue
        before = path.read_text()
        after = subprocess.run([tool, "--style=file", "--assume-filename=" + str(path)], input=before, cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout
        if before == after:
            continue
        differing.append(path)
        if fix:
            path.write_text(after)
            continue
        diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), str(path.relative_to(ROOT)),
                                         "clang-format", lineterm="", n=0))
        print("\n".join(diff[:12]))
    if differing and not fix:
        print(f"check_format: {len(differing)} file(s) differ from clang-format's output; "
              "scripts/check_format.py --fix rewrites them")
        return 1
    if fix:
        print(f"check_format: rewrote {len(differing)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
