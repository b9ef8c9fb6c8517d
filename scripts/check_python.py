"""Checks that this interpreter imports each module named on the command line.

    .venv/bin/python scripts/check_python.py pytest numpy cunumpy pyccel

Exit 1 with one line per missing module and how to install it.
"""

import importlib
import sys

missing = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as error:  # an ImportError, or a package that fails while importing
        missing.append(f"  {name}: {type(error).__name__}: {error}")
if missing:
    print(f"{sys.executable} cannot import:", *missing, sep="\n", file=sys.stderr)
    print("install them with: scripts/setup --no-run  (or: "
          f"{sys.executable} -m pip install -r requirements-dev.txt)", file=sys.stderr)
    sys.exit(1)
