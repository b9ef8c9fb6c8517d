"""Prints "N passed, N failed[, N skipped]" over meson test logs (JSON lines)."""

import json
import sys

counts = {"passed": 0, "failed": 0, "skipped": 0}
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        counts["failed"] += 1
        continue
    for line in lines:
        result = json.loads(line)["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            counts["passed"] += 1
        elif result == "SKIP":
            counts["skipped"] += 1
        else:
            counts["failed"] += 1
summary = f"{counts['passed']} passed, {counts['failed']} failed"
if counts["skipped"]:
    summary += f", {counts['skipped']} skipped"
print(summary)
