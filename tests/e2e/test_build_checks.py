"""Nothing unloadable is published: every artifact is checked before it enters the cache,
and a kernel publishes all its targets or none."""

import hashlib
from pathlib import Path

from conftest import jobs_by_state

KERNEL = 'extern "C" __global__ void push(double* x, long long n)\n{ if (threadIdx.x < n) x[threadIdx.x] += 1; }\n'
WITH_UNDEFINED_HELPER = (
    'extern "C" __device__ double helper(double);\n'
    'extern "C" __global__ void push(double* x, long long n)\n{ if (threadIdx.x < n) x[threadIdx.x] = helper(x[0]); }\n'
)


def kernel_tree(root: Path, source: str) -> Path:
    """A package `sim.kernels` with one kernel `push` whose CUDA source is `source`."""
    folder = root / "src" / "sim" / "kernels" / "push"
    folder.mkdir(parents=True)
    for package in (root / "src" / "sim", root / "src" / "sim" / "kernels"):
        (package / "__init__.py").write_text("")
    (folder / "push_kernels.py").write_text("def push(x: 'float[:]', n: int):\n    pass\n")
    (folder / "push_cuda.cu").write_text(source)
    return root / "src"


def published(cache: Path):
    """Every artifact file in the cache's CUDA entries, with its SHA-256."""
    return {path: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in (cache / "cuda").glob("*/*/*") if path.name != "manifest.json"}


def build(run, cache, tree, *flags, env=None):
    return run.json("build", "--only", "cuda", "--cache-dir", cache, *flags, tree, env=env)


def wrapped_toolkit(root: Path, extra: str, tool: str = "nvcc") -> Path:
    """A toolkit folder whose `tool` (nvcc, or ptxas, which assembles NVRTC's cubins)
    appends `extra` to every command line (a site wrapper)."""
    toolkit = root / f"wrapped-{tool}"
    (toolkit / "bin").mkdir(parents=True)
    for entry in Path("/usr/local/cuda").iterdir():
        if entry.name != "bin":
            (toolkit / entry.name).symlink_to(entry)
    for entry in Path("/usr/local/cuda/bin").iterdir():
        if entry.name != tool:
            (toolkit / "bin" / entry.name).symlink_to(entry)
    wrapper = toolkit / "bin" / tool
    wrapper.write_text(f'#!/bin/sh\nexec /usr/local/cuda/bin/{tool} "$@" {extra}\n')
    wrapper.chmod(0o755)
    return toolkit


def test_an_arch_option_in_nvcc_append_flags_is_refused(run, tmp_path):
    tree = kernel_tree(tmp_path, KERNEL)
    cache = tmp_path / "cache"
    result = run("build", "--only", "cuda", "--compiler", "nvcc", "--cache-dir", cache, tree,
                 env={"NVCC_APPEND_FLAGS": "-arch=sm_80"})
    assert result.returncode == 2, result.stderr
    assert "-arch=sm_80 is not accepted" in result.stderr and "--arch" in result.stderr
    assert not published(cache)


def test_an_arch_that_slips_past_the_option_screen_publishes_nothing(run, tmp_path):
    tree = kernel_tree(tmp_path, KERNEL)
    cache = tmp_path / "cache"
    toolkit = wrapped_toolkit(tmp_path, "-arch=sm_80")
    report, result = build(run, cache, tree, "--compiler", "nvcc", "--cuda-root", toolkit, "--arch", "sm_90", "--no-ptx")
    assert result.returncode == 1, result.stderr
    [job] = report["jobs"]
    assert job["state"] == "failed"
    assert "check 'architecture' failed: the cubin is for sm_80" in job["log"]
    assert "push.sm_90.cubin of " in job["log"]
    assert not published(cache)
    assert not list((cache / ".cunumpy-kernels-tmp").glob("*"))


def test_an_assembler_that_fails_publishes_no_target_of_the_kernel(run, tmp_path):
    # NVRTC makes each virtual architecture's PTX once and the toolkit's ptxas assembles the
    # cubins; this one is told sm_80 whatever it is asked, which sm_90's PTX refuses.
    tree = kernel_tree(tmp_path, KERNEL)
    cache = tmp_path / "cache"
    toolkit = wrapped_toolkit(tmp_path, "-arch=sm_80", tool="ptxas")
    report, result = build(run, cache, tree, "--compiler", "nvrtc", "--cuda-root", toolkit, "--arch", "sm_80,sm_90")
    assert result.returncode == 1, result.stderr
    jobs = {j["target"]: j for j in report["jobs"]}
    assert set(jobs) == {"sm_80", "sm_90", "compute_90"}
    assert {j["state"] for j in jobs.values()} == {"failed"}
    assert f"ptxas ({toolkit}/bin/ptxas) failed on NVRTC's PTX for sm_90" in jobs["sm_90"]["log"]
    assert "push_cuda.cu: error: " in jobs["sm_90"]["log"]
    # sm_80 and the PTX are fine, but their kernel's sm_90 is not: all or none.
    for target in ("sm_80", "compute_90"):
        assert "not published: " in jobs[target]["log"] and "all its targets or none" in jobs[target]["log"]
    assert not published(cache)
    assert not list((cache / ".cunumpy-kernels-tmp").glob("*"))


def test_one_nvcc_run_for_all_targets_gives_each_target_its_own_artifact(run, tmp_path):
    # Several targets are one -fatbin run with a -gencode each: a wrapper's extra -arch
    # adds a fat binary part, and every target still gets the code of its own architecture.
    tree = kernel_tree(tmp_path, KERNEL)
    cache = tmp_path / "cache"
    toolkit = wrapped_toolkit(tmp_path, "-arch=sm_80")
    report, result = build(run, cache, tree, "--compiler", "nvcc", "--cuda-root", toolkit, "--arch", "sm_80,sm_90")
    assert result.returncode == 0, result.stderr
    jobs = {j["target"]: j for j in report["jobs"]}
    assert {j["state"] for j in jobs.values()} == {"built"}
    for target in ("sm_80", "sm_90"):
        cubin = Path(jobs[target]["artifacts"][0]).read_bytes()
        # e_flags bits 8-15 hold the SASS architecture from CUDA 13's ELF ABI version 8 on (cuda_elf.hpp).
        assert cubin[0x30 + 1] == int(target[3:]), target
        assert jobs[target]["phases"]["ptxas"] > 0
    assert b".target sm_90" in Path(jobs["compute_90"]["artifacts"][0]).read_bytes()
    # One run: the three targets share its wall time.
    assert len({j["seconds"] for j in jobs.values()}) == 1
    assert report["schedule"]["jobs"] == 1


def test_a_target_that_fails_in_one_nvcc_run_is_named(run, tmp_path):
    # One nvcc run makes all targets; when it fails, each is compiled alone, so the
    # failure is the target's own and the others say which sibling stopped them.
    source = KERNEL.replace("extern", "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900\n"
                                      "#error needs sm_90\n#endif\nextern", 1)
    tree = kernel_tree(tmp_path, source)
    cache = tmp_path / "cache"
    report, result = build(run, cache, tree, "--compiler", "nvcc", "--arch", "sm_80,sm_90")
    assert result.returncode == 1, result.stderr
    jobs = {j["target"]: j for j in report["jobs"]}
    assert "needs sm_90" in jobs["sm_80"]["log"] and "not published" not in jobs["sm_80"]["log"]
    for target in ("sm_90", "compute_90"):
        assert "needs sm_90" not in jobs[target]["log"]
        assert "not published: sm_80 of kernel" in jobs[target]["log"]
    assert not published(cache)


def test_an_arch_compiler_option_is_refused(run, tmp_path):
    tree = kernel_tree(tmp_path, KERNEL)
    for compiler in ("nvcc", "nvrtc"):
        cache = tmp_path / f"cache-{compiler}"
        result = run("build", "--only", "cuda", "--compiler", compiler, "--arch", "sm_90", "--no-ptx",
                     "--compiler-option=-arch=sm_80", "--cache-dir", cache, tree)
        assert result.returncode == 2, result.stderr
        assert "is not accepted" in result.stderr
        assert not published(cache)
    # nvcc's bookkeeping options: the tool runs nvcc with its own.
    for option in ("--time=/tmp/t.csv", "--keep-dir=/tmp/kd", "-keep", "-save-temps"):
        result = run("build", "--only", "cuda", "--compiler", "nvcc", f"--compiler-option={option}",
                     "--cache-dir", tmp_path / "cache-keep", tree)
        assert result.returncode == 2 and "is not accepted" in result.stderr, (option, result.stderr)


def test_relocatable_device_code_is_never_published(run, tmp_path):
    for name, source in (("plain", KERNEL), ("helper", WITH_UNDEFINED_HELPER)):
        tree = kernel_tree(tmp_path / name, source)
        cache = tmp_path / name / "cache"
        result = run("build", "--only", "cuda", "--arch", "sm_90", "--compiler-option=-rdc=true",
                     "--cache-dir", cache, tree)
        assert result.returncode == 2 and "-rdc=true is not accepted" in result.stderr, result.stderr
        assert not published(cache)
        # Behind the option screen, the checks refuse the relocatable cubin.
        toolkit = wrapped_toolkit(tmp_path / name, "-rdc=true")
        result = run("build", "--only", "cuda", "--compiler", "nvcc", "--cuda-root", toolkit, "--arch", "sm_90",
                     "--cache-dir", cache, tree)
        assert result.returncode == 1, result.stderr
        assert "check 'executable' failed: the cubin is relocatable (ELF type ET_REL)" in result.stderr
        assert not published(cache)


def test_an_undefined_extern_helper_publishes_not_even_the_ptx(run, tmp_path):
    tree = kernel_tree(tmp_path, WITH_UNDEFINED_HELPER)
    cache = tmp_path / "cache"
    report, result = build(run, cache, tree, "--arch", "sm_90")
    assert result.returncode == 1
    jobs = {j["target"]: j for j in report["jobs"]}
    assert "Unresolved extern function 'helper'" in jobs["sm_90"]["log"]
    assert "check 'ptx externs' failed: unresolved .extern .func helper" in jobs["compute_90"]["log"]
    assert {j["state"] for j in jobs.values()} == {"failed"}
    assert not published(cache)
    result = run("build", "--only", "cuda", "--cache-dir", cache, "--arch", "sm_90", tree)
    assert result.returncode == 1
    assert "push.compute_90.ptx of " in result.stderr and "check 'ptx externs' failed" in result.stderr


def test_a_failed_rebuild_keeps_the_earlier_good_entries(run, tmp_path):
    tree = kernel_tree(tmp_path, KERNEL)
    cache = tmp_path / "cache"
    first, result = build(run, cache, tree, "--arch", "sm_90")
    assert result.returncode == 0, result.stderr
    before = published(cache)
    assert len(before) == 2  # push.sm_90.cubin and push.compute_90.ptx
    source = tree / "sim" / "kernels" / "push" / "push_cuda.cu"
    source.write_text(WITH_UNDEFINED_HELPER)
    _, result = build(run, cache, tree, "--arch", "sm_90")
    assert result.returncode == 1
    assert published(cache) == before
    source.write_text(KERNEL)
    again, result = build(run, cache, tree, "--arch", "sm_90")
    assert result.returncode == 0
    assert len(jobs_by_state(again, "hit")) == 2
    assert {j["entry"] for j in again["jobs"]} == {j["entry"] for j in first["jobs"]}
