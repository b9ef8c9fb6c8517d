"""Runs one libFuzzer target for a bounded time (CK_FUZZ_SECONDS, default 20) from the seed corpus.

New inputs go to a temporary folder, never into the source tree. An input
that crashes or hangs is written under the artifacts folder; copy it into
tests/fuzz/regressions/<reader>/ so that the unit test replays it forever.
"""

import os
import subprocess
import sys
import tempfile

fuzzer, seeds, dictionary, artifacts = sys.argv[1:5]
seconds = int(os.environ.get("CK_FUZZ_SECONDS", "20"))
os.makedirs(artifacts, exist_ok=True)
with tempfile.TemporaryDirectory() as work:
    result = subprocess.run([
        fuzzer, f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048", "-max_len=16384",
        f"-dict={dictionary}", f"-artifact_prefix={artifacts}/", "-print_final_stats=1", work, seeds,
    ])
found = sorted(os.listdir(artifacts))
if result.returncode != 0 and found:
    print(f"{fuzzer} found inputs that fail, in {artifacts}: {found}; add each to tests/fuzz/regressions/",
          file=sys.stderr)
# libFuzzer ends a failing run with 77, which meson reads as "skipped": any failure is exit 1.
sys.exit(1 if result.returncode != 0 else 0)
