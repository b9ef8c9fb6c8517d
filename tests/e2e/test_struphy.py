"""`build` on the real kernel tree of Struphy, as published on PyPI."""

import re

from conftest import jobs_by_state


def test_every_struphy_cuda_kernel_builds_or_fails_with_the_compilers_diagnostic(run, struphy_tree, tmp_path):
    cuda_sources = sorted(p for p in struphy_tree.rglob("*_cuda.cu") if p.parent.name + "_cuda.cu" == p.name)
    assert cuda_sources, "the published wheel ships no .cu files"
    report, result = run.json("build", "--only", "cuda", "--jobs", "2", "--arch", "sm_90", "--cache-dir", tmp_path / "cache",
                              struphy_tree / "struphy")
    assert result.returncode in (0, 1), result.stderr
    ported = [k for k in report["kernels"] if k["cuda"]]
    assert len(ported) == len(cuda_sources)
    assert len(report["kernels"]) > 100
    assert len(report["jobs"]) == 2 * len(ported)
    for job in report["jobs"]:
        assert job["state"] in ("built", "failed")
        if job["state"] == "failed":
            assert re.search(r"_cuda\.cu(h)?:\d+: (error|catastrophic error)", job["log"]) or re.search(r"\.cuh:\d+: ", job["log"]), job["log"]
    built = {j["kernel"] for j in jobs_by_state(report, "built")}
    failed = {j["kernel"] for j in jobs_by_state(report, "failed")}
    print(f"struphy: {len(report['kernels'])} kernels, {len(ported)} with CUDA; "
          f"{len(built)} built, {len(failed)} failed: {sorted(failed)}")
    # The second run is warm.
    report, _ = run.json("build", "--only", "cuda", "--jobs", "2", "--arch", "sm_90", "--cache-dir", tmp_path / "cache",
                         struphy_tree / "struphy")
    assert len(jobs_by_state(report, "hit")) == 2 * len(built)
