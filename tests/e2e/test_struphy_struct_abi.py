"""Struphy 3.5.0's three committed struct headers against its real writers
(struphy.utils.cuda_arguments, run by the tests' Python, which has cunumpy and
numpy), a CudaStruct edited in place, and its struct-taking kernels' cubins
against the layouts of those headers."""

import json
import shutil
import textwrap
import time

from conftest import PYTHON, jobs_by_state

HEADERS = {
    "struphy/kernel_arguments/pusher_args.cuh": "struphy.utils.cuda_arguments:write_pusher_header",
    "struphy/kernel_arguments/local_projectors_args.cuh": "struphy.utils.cuda_arguments:write_local_projectors_header",
    "struphy/kernel_arguments/spline_args.cuh": "struphy.utils.cuda_arguments:write_spline_header",
}


def configured_copy(struphy_tree, tmp_path):
    """A copy of the tree with a pyproject.toml that names the three headers and their writers."""
    root = tmp_path / "tree"
    shutil.copytree(struphy_tree / "struphy", root / "struphy")
    table = "\n".join(f'"{header}" = "{writer}"' for header, writer in HEADERS.items())
    (root / "pyproject.toml").write_text(textwrap.dedent(f'''
        [tool.cunumpy-kernels]
        python = "{PYTHON}"

        [tool.cunumpy-kernels.struct-headers]
    ''') + table + "\n")
    return root


def header_report(run, root):
    result = run("check-signatures", "--format", "json", root / "struphy", cwd=root)
    return json.loads(result.stdout)["struct_headers"], result


def test_struphys_three_headers_are_what_its_writers_write_and_a_warm_check_is_cheap(run, struphy_tree, tmp_path):
    root = configured_copy(struphy_tree, tmp_path)
    start = time.monotonic()
    findings, result = header_report(run, root)
    cold = time.monotonic() - start
    assert findings == [], result.stdout
    start = time.monotonic()
    findings, _ = header_report(run, root)
    warm = time.monotonic() - start
    assert findings == []
    print(f"check-signatures over Struphy with its 3 struct headers: cold {cold:.2f} s, warm {warm:.2f} s")


def test_an_edited_struphy_cuda_struct_fails_with_the_diff_of_its_header_only(run, struphy_tree, tmp_path):
    root = configured_copy(struphy_tree, tmp_path)
    module = root / "struphy" / "kernel_arguments" / "pusher_args_cuda.py"
    text = module.read_text()
    assert '("n_markers", "int"),' in text
    module.write_text(text.replace('("n_markers", "int"),', '("n_markers", "long long"),'))
    findings, result = header_report(run, root)
    assert result.returncode == 1
    assert [f["header"].endswith("pusher_args.cuh") for f in findings] == [True], findings
    [finding] = findings
    assert finding["problem"] == "differs from what struphy.utils.cuda_arguments:write_pusher_header writes"
    assert "-    int n_markers;" in finding["diff"].splitlines() and "+    long long n_markers;" in finding["diff"].splitlines()
    assert "write_pusher_header(\"struphy/kernel_arguments/pusher_args.cuh\")" in finding["regenerate"]


def test_struphys_struct_taking_pushers_build_with_the_layouts_of_its_headers(run, struphy_tree, tmp_path):
    root = configured_copy(struphy_tree, tmp_path)
    args = ["build", "--only", "cuda", "--jobs", "2", "--arch", "sm_90", "--no-ptx", "--cache-dir", tmp_path / "cache",
            root / "struphy" / "pic" / "pushing" / "kernels"]
    report, result = run.json(*args, timeout=1800)
    assert result.returncode == 0, [j["log"] for j in report["jobs"] if j["state"] != "built"]
    assert report["jobs"] and len(jobs_by_state(report, "built")) == len(report["jobs"])
    status, result = run.json("status", "--only", "cuda", "--arch", "sm_90", "--no-ptx", "--require-built",
                              "--cache-dir", tmp_path / "cache", root / "struphy" / "pic" / "pushing" / "kernels")
    assert result.returncode == 0, result.stderr
    assert status["struct_headers"] == []
