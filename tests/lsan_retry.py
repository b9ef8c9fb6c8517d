#!/usr/bin/env python3
"""Runs a unit test binary of the sanitizer build, and once more when only LeakSanitizer's own
tracer failed.

At exit LeakSanitizer stops the process's threads with ptrace to scan them, and with GCC 12 on
these VMs that tracer fails now and then ("LeakSanitizer has encountered a fatal error",
google/sanitizers#1342) after every doctest case passed: no result of the test, so the suite runs
once more. A failed case, a leak report or any other crash is never run again.

    lsan_retry.py TEST_BINARY [ARGS...]
"""
import subprocess
import sys

TRACER_FAILED = "LeakSanitizer has encountered a fatal error"


def run():
    done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sys.stdout.buffer.write(done.stdout)
    sys.stdout.flush()
    return done.returncode, done.stdout.decode(errors="replace")


def only_the_tracer_failed(returncode, output):
    return (returncode != 0 and TRACER_FAILED in output and "| 0 failed |" in output
            and "detected memory leaks" not in output and "ERROR: AddressSanitizer" not in output
            and "runtime error:" not in output)


returncode, output = run()
if only_the_tracer_failed(returncode, output):
    print(f"lsan_retry: {TRACER_FAILED} after every case passed: running once more", flush=True)
    returncode, output = run()
sys.exit(returncode)
