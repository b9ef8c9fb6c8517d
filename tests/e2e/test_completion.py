"""The bash completion of share/completions, driven as bash drives it, against the built CLI."""

import subprocess

import pytest

from conftest import CLI, SOURCE_ROOT

SCRIPT = SOURCE_ROOT / "share" / "completions" / "cunumpy-kernels.bash"


def complete(line):
    """COMPREPLY for the command line `line` (the cursor at its end)."""
    driver = (
        'source "$1"; read -ra COMP_WORDS <<<"$2"; [[ $2 == *" " ]] && COMP_WORDS+=("");'
        ' COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _cunumpy_kernels; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    result = subprocess.run(["bash", "-c", driver, "_", str(SCRIPT), f"{CLI} {line}"],
                            capture_output=True, text=True, timeout=60, check=True)
    return [word for word in result.stdout.splitlines() if word]


@pytest.mark.parametrize("line, expected", [
    ("b", ["build", "bundle"]),
    ("bun", ["bundle"]),
    ("status --bun", ["--bundle"]),
    ("-q st", ["status"]),
    ("cache v", ["verify"]),
    ("build --on", ["--only"]),
    ("build --only ", ["host", "cuda", "cupy"]),
    ("build --language f", ["fortran"]),
    ("status --require-c", ["--require-cuda"]),
    ("check-signatures --format ", ["text", "json", "github"]),
    ("cache prune --max-", ["--max-age", "--max-size"]),
])
def test_commands_flags_and_values_complete(line, expected):
    assert complete(line) == expected


def test_every_flag_of_build_is_offered():
    flags = complete("build --")
    help_text = subprocess.run([CLI, "build", "--help"], capture_output=True, text=True, check=True).stdout
    for flag in ("--jobs", "--arch", "--dry-run", "--python", "--cache-dir", "--json", "--openmp"):
        assert flag in help_text and flag in flags
