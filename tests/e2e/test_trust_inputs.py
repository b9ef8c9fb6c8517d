"""Inputs trusted by construction (issue 39): computed includes, bytes that
are not UTF-8, Python text as Python reads it, targets as the driver loads
them, bundles checked wherever they are read."""

import json
import os
from pathlib import Path

import pytest

from conftest import jobs_by_state

KERNELS_DIR = Path("particles") / "kernels"
COMMON = '#include "particles/kernels/common.cuh"'


def built_kernels(report):
    return sorted({j["kernel"] for j in jobs_by_state(report, "built")})


# -- computed includes --------------------------------------------------------

COMPUTED_SPELLINGS = {
    "string": '#define COMMON "particles/kernels/common.cuh"\n#include COMMON',
    "header name": "#define COMMON <particles/kernels/common.cuh>\n#include COMMON",
    "chain": '#define COMMON_NAME "particles/kernels/common.cuh"\n#define COMMON COMMON_NAME\n#include COMMON',
}


@pytest.mark.parametrize("spelling", sorted(COMPUTED_SPELLINGS))
@pytest.mark.parametrize("compiler", ["nvrtc", "nvcc"])
def test_a_computed_include_is_followed_and_its_header_keyed(run, example, tmp_path, spelling, compiler):
    push = example / KERNELS_DIR / "push" / "push_cuda.cu"
    push.write_text(push.read_text().replace(COMMON, COMPUTED_SPELLINGS[spelling]))
    cache = tmp_path / "cache"
    args = ("build", "--only", "cuda", "--compiler", compiler, "--arch", "sm_90", "--no-ptx", "--cache-dir", cache, example)
    report, result = run.json(*args, check=0)
    assert built_kernels(report) == ["deposit", "push"], result.stderr
    assert "scanner bug" not in result.stdout + result.stderr
    push_job = next(j for j in report["jobs"] if j["kernel"] == "push")
    manifest = json.loads((Path(push_job["entry"]) / "manifest.json").read_text())
    assert "particles/kernels/common.cuh" in manifest["inputs"]["headers"]
    common = example / KERNELS_DIR / "common.cuh"
    common.write_text(common.read_text() + "\n// changed\n")
    dry = run("build", "--dry-run", *args[1:], check=0)
    assert "would build particles.kernels.push [sm_90]: header particles/kernels/common.cuh changed" in dry.stdout
    report, _ = run.json(*args, check=0)
    assert built_kernels(report) == ["deposit", "push"]


@pytest.mark.parametrize(
    "directive,reason",
    [
        ("#include NOWHERE", "NOWHERE is defined as a header name"),
        ("#define MAKE(x) #x\n#include MAKE(particles/kernels/common.cuh)", "is no macro name"),
        ("#define COMMON 1\n#include COMMON", "COMMON is defined as a header name"),
    ],
)
def test_a_computed_include_that_cannot_be_resolved_fails_its_kernel_up_front(run, example, tmp_path, directive, reason):
    push = example / KERNELS_DIR / "push" / "push_cuda.cu"
    push.write_text(push.read_text().replace(COMMON, COMMON + "\n" + directive))
    line = 1 + directive.count("\n") + 1
    report, result = run.json("build", "--only", "cuda", "--dry-run", "--cache-dir", tmp_path / "cache", example)
    failed = [j for j in report["jobs"] if j["state"] == "failed"]
    assert {j["kernel"] for j in failed} == {"push"}
    log = failed[0]["log"]
    assert f"push_cuda.cu:{line}: error: #include" in log and reason in log
    assert "write the header's name in quotes" in log


# -- Python text as Python reads it -------------------------------------------

def as_crlf(text):
    return text.replace("\n", "\r\n")


PYTHON_SPELLINGS = {
    "byte order mark": lambda text: b"\xef\xbb\xbf" + text.encode(),
    "latin-1 coding line": lambda text: ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + text).encode("latin-1"),
    "CRLF": lambda text: as_crlf(text).encode(),
    "byte order mark and CRLF": lambda text: b"\xef\xbb\xbf" + as_crlf(text).encode(),
}


@pytest.mark.parametrize("spelling", sorted(PYTHON_SPELLINGS))
def test_a_host_module_is_read_as_python_reads_it(run, example, tmp_path, spelling):
    module = example / KERNELS_DIR / "push" / "push_kernels.py"
    module.write_bytes(PYTHON_SPELLINGS[spelling](module.read_text()))
    report, result = run.json("build", "--only", "cuda", "--dry-run", "--cache-dir", tmp_path / "cache", example)
    modules = {k["module"]: k for k in report["kernels"]}
    assert "particles.kernels.push" in modules, result.stderr
    assert modules["particles.kernels.push"]["cuda"] is not None
    checked = run("check-signatures", example)
    assert checked.returncode == 0, checked.stdout + checked.stderr


# -- targets as the driver loads them -------------------------------------------

@pytest.mark.parametrize("target", ["sm_90a", "compute_90a", "sm_100f", "compute_100f"])
def test_an_arch_or_family_specific_target_is_built_and_found_under_its_own_name(run, example, tmp_path, target):
    cache = tmp_path / "cache"
    report, result = run.json("build", "--only", "cuda", "--arch", target, "--no-ptx", "--cache-dir", cache, example, check=0)
    assert {j["target"] for j in jobs_by_state(report, "built")} == {target}, result.stderr
    path = run("cache", "path", "--arch", target, "--cache-dir", cache, "--tree", example, "push", check=0).stdout.strip()
    assert path.endswith(f"push.{target}." + ("ptx" if target.startswith("compute_") else "cubin"))
