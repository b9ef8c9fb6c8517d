"""Every input that can change an artifact is in the key, or refused, or kept from the compiler.

Each test builds a one-kernel package, changes one input, and checks the next
build compiles again (naming the input in `build --dry-run`), or refuses the
input, or shows it has no effect. Builds are one target (sm_90, no PTX) to
keep them short.
"""

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from conftest import jobs_by_state

COMPILERS = ["nvrtc", "nvcc"]
KERNEL = 'extern "C" __global__ void scale(double* x, long long n)\n{ long long i = threadIdx.x; if (i < n) x[i] *= SCALE; }\n'


@pytest.fixture
def tree(tmp_path):
    """src/sim/kernels/scale/ with a kernel that includes "tune.cuh" from an include folder inc/."""
    src = tmp_path / "proj" / "src"
    kernel = src / "sim" / "kernels" / "scale"
    kernel.mkdir(parents=True)
    for package in (src / "sim", src / "sim" / "kernels"):
        (package / "__init__.py").write_text("")
    (kernel / "scale_kernels.py").write_text("def scale(x: 'float[:]', n: int):\n    pass\n")
    (kernel / "scale_cuda.cu").write_text('#include "tune.cuh"\n' + KERNEL)
    inc = tmp_path / "proj" / "inc"
    inc.mkdir()
    (inc / "tune.cuh").write_text("#ifndef SCALE\n#define SCALE 2.0\n#endif\n")
    (tmp_path / "proj" / "pyproject.toml").write_text("[tool.cunumpy-kernels]\narch = [\"sm_90\"]\nptx = false\n")
    return src


class Build:
    """Runs `build --only cuda` on the tree with one cache and fixed flags."""

    def __init__(self, run, tree, tmp_path, compiler, *flags, cwd=None):
        self.run, self.tree, self.cache, self.cwd = run, tree, tmp_path / "cache", cwd
        self.flags = ["--only", "cuda", "--compiler", compiler, "--cache-dir", self.cache, *flags]

    def __call__(self, *more, env=None, check=None):
        return self.run("build", *self.flags, *more, self.tree, env=env, check=check, cwd=self.cwd)

    def report(self, *more, env=None):
        report, result = self.run.json("build", *self.flags, *more, self.tree, env=env, cwd=self.cwd)
        return report, result

    def reason(self, *more, env=None):
        out = self("--dry-run", *more, env=env).stdout
        lines = [line for line in out.splitlines() if line.startswith("would build")]
        return lines[0].split(": ", 1)[1] if lines else "(cached)"

    def manifest(self, *more, env=None):
        report, _ = self.report(*more, env=env)
        (job,) = report["jobs"]
        return json.loads((Path(job["entry"]) / "manifest.json").read_text())


def summary(result):
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize(
    "spelling",
    [["--compiler-option=-I{inc}"], ["--compiler-option=-I", "--compiler-option={inc}"],
     ["--compiler-option=--include-path={inc}"], ["--compiler-option=--include-path", "--compiler-option={inc}"],
     ["--compiler-option=-Irelative_inc"]],
)
def test_a_header_found_through_an_include_option_is_in_the_key(run, tree, tmp_path, compiler, spelling):
    inc = tree.parent / "inc"
    os.symlink(inc, tmp_path / "relative_inc")  # relative folders are the working folder's
    flags = [s.format(inc=inc) for s in spelling]
    build = Build(run, tree, tmp_path, compiler, *flags, cwd=tmp_path)
    result = build()
    assert "1 built" in summary(result), result.stderr
    manifest = build.manifest()
    assert set(manifest["inputs"]["headers"]) == {"<I:0>/tune.cuh"}
    (inc / "tune.cuh").write_text("#define SCALE 3.0\n")
    assert build.reason() == "header <I:0>/tune.cuh changed"
    assert "1 built, 0 cached" in summary(build())


def test_relative_include_options_are_the_working_folders_and_pyprojects(run, tree, tmp_path):
    cache = tmp_path / "cache"
    flags = ["build", "--only", "cuda", "--cache-dir", cache]
    result = run(*flags, "--compiler-option=-Iinc", "src", cwd=tree.parent, check=0)
    assert "1 built" in result.stdout, result.stderr
    pyproject = tree.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'options = ["-Iinc"]\n')
    result = run(*flags, tree, check=0)  # from another folder: inc/ is pyproject.toml's
    assert "1 cached" in result.stdout, result.stderr


@pytest.mark.parametrize("compiler", COMPILERS)
def test_system_folders_and_forced_includes_are_in_the_key(run, tree, tmp_path, compiler):
    inc = tree.parent / "inc"
    kernel = tree / "sim" / "kernels" / "scale" / "scale_cuda.cu"
    kernel.write_text("#include <tune.cuh>\n" + KERNEL)
    (inc / "force.cuh").write_text("#define FORCED 1\n")
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option=-isystem{inc}",
                  f"--compiler-option=--pre-include={inc / 'force.cuh'}")
    result = build()
    assert "1 built" in summary(result), result.stderr
    inputs = build.manifest()["inputs"]
    assert set(inputs["headers"]) == {"<isystem:0>/tune.cuh", "<isystem:0>/force.cuh"}
    assert inputs["pre_includes"] == ["<isystem:0>/force.cuh"]
    (inc / "force.cuh").write_text("#define FORCED 2\n")
    assert build.reason() == "header <isystem:0>/force.cuh changed"


@pytest.mark.parametrize(
    "option",
    ["-arch=sm_80", "--gpu-architecture=sm_80", "-gencode=arch=compute_80,code=sm_80", "--generate-code=arch=compute_80",
     "-code=sm_80", "--gpu-code=sm_80", "-rdc=true", "--relocatable-device-code=true", "-dc", "-dlink", "-lto", "-dlto",
     "-G", "--device-debug", "-ptx", "-cubin", "-fatbin", "-o=x.cubin", "-c", "-M", "-MD", "--no-source-include"],
)
def test_target_and_output_options_are_refused(run, tree, tmp_path, option):
    result = run("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", f"--compiler-option={option}", tree)
    assert result.returncode == 2, result.stderr
    assert f"--compiler-option: {option} is not accepted" in result.stderr
    if option.split("=")[0] in ("-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code"):
        assert "--arch" in result.stderr


def test_a_refused_option_in_pyproject_names_the_file_and_key(run, tree, tmp_path):
    pyproject = tree.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'options = ["-DX", "-arch=sm_80"]\n')
    result = run("build", "--only", "cuda", "--cache-dir", tmp_path / "cache", tree)
    assert result.returncode == 2
    assert f"{pyproject}:4: [tool.cunumpy-kernels] options: -arch=sm_80 is not accepted" in result.stderr
    assert "(config key arch)" in result.stderr


@pytest.mark.parametrize("compiler", COMPILERS)
def test_keyed_options_name_themselves_and_unknown_ones_are_refused(run, tree, tmp_path, compiler):
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option=-I{tree.parent / 'inc'}")
    build()
    for option in ["-DEXTRA=1", "--use_fast_math", "-lineinfo", "-maxrregcount=32", "--extra-device-vectorization",
                   "-std=c++17"]:
        assert build.reason(f"--compiler-option={option}") == f"compiler option {option} added"
    result = build("--compiler-option=--frobnicate", "--dry-run")
    assert result.returncode == 2 and "--compiler-option: --frobnicate is not accepted" in result.stderr
    assert "--verbatim-option=--frobnicate" in result.stderr


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_header_reached_through_include_next_is_in_the_key(run, tree, tmp_path, compiler):
    # inc/tune.cuh wraps the next tune.cuh in the search (inc2/); nvcc's own
    # dependency list checks the scanner followed it.
    inc, inc2 = tree.parent / "inc", tree.parent / "inc2"
    inc2.mkdir()
    (inc / "tune.cuh").write_text("#include_next <tune.cuh>\n")
    (inc2 / "tune.cuh").write_text("#define SCALE 2.0\n")
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option=-I{inc}", f"--compiler-option=-I{inc2}")
    assert set(build.manifest()["inputs"]["headers"]) == {"<I:0>/tune.cuh", "<I:1>/tune.cuh"}
    (inc2 / "tune.cuh").write_text("#define SCALE 3.0\n")
    assert build.reason() == "header <I:1>/tune.cuh changed"


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_header_appearing_in_an_earlier_folder_rebuilds(run, tree, tmp_path, compiler):
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option=-I{tree.parent / 'inc'}")
    build()
    assert "<kernel>/tune.cuh" in build.manifest()["inputs"]["absent"]
    shadow = tree / "sim" / "kernels" / "scale" / "tune.cuh"
    shadow.write_text("#define SCALE 5.0\n")
    assert build.reason() == "header <kernel>/tune.cuh appeared (an earlier lookup found nothing there)"
    assert "1 built" in summary(build())
    assert set(build.manifest()["inputs"]["headers"]) == {"<kernel>/tune.cuh"}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_quoted_include_found_nowhere_fails_unless_guarded(run, tree, tmp_path, compiler):
    kernel = tree / "sim" / "kernels" / "scale" / "scale_cuda.cu"
    build = Build(run, tree, tmp_path, compiler)
    result = build()
    assert result.returncode == 1
    assert f'{kernel}:1: error: #include "tune.cuh" not found (the scan follows every #if branch' in result.stderr
    assert '#if __has_include("tune.cuh")); searched:' in result.stderr
    assert str(tree / "sim" / "kernels" / "scale") in result.stderr
    kernel.write_text('#if __has_include("tune.cuh")\n#include "tune.cuh"\n#else\n#define SCALE 1.0\n#endif\n' + KERNEL)
    result = build()
    assert "1 built" in summary(result), result.stderr
    (tree / "sim" / "kernels" / "scale" / "tune.cuh").write_text("#define SCALE 4.0\n")
    assert build.reason() == "header <kernel>/tune.cuh appeared (an earlier lookup found nothing there)"


@pytest.mark.parametrize("header", ["<cuda/std/cstdint>", "<cuda/std/cmath>", "<cooperative_groups.h>"])
@pytest.mark.parametrize("compiler", COMPILERS)
def test_toolkit_headers_build_with_both_compilers_and_only_the_named_one_is_keyed(run, tree, tmp_path, compiler, header):
    kernel = tree / "sim" / "kernels" / "scale" / "scale_cuda.cu"
    kernel.write_text(f"#include {header}\n#define SCALE 2.0\n" + KERNEL)
    build = Build(run, tree, tmp_path, compiler)
    result = build()
    assert "1 built" in summary(result), result.stderr
    # What the toolkit header includes in turn is not followed.
    assert list(build.manifest()["inputs"]["headers"]) == [f"<cuda>/{header[1:-1]}"]


def test_nvrtc_on_a_host_only_header_suggests_nvcc(run, tree, tmp_path):
    inc = tree.parent / "inc"
    (inc / "tune.cuh").write_text("#include <vector>\n#define SCALE 2.0\ninline std::vector<int> host_only() { return {}; }\n")
    build = Build(run, tree, tmp_path, "nvrtc", f"--compiler-option=-I{inc}")
    result = build()
    assert result.returncode == 1
    assert "vector" in result.stderr and "build with --compiler nvcc" in result.stderr
    assert "1 built" in summary(Build(run, tree, tmp_path / "nvcc", "nvcc", f"--compiler-option=-I{inc}")())


@pytest.mark.parametrize("variable", ["NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS"])
def test_nvcc_flag_variables_are_keyed_and_parsed(run, tree, tmp_path, variable):
    inc = tree.parent / "inc"
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{inc}")
    build()
    env = {variable: "-DSCALE=7.0"}
    assert build.reason(env=env) == f'environment variable {variable}: unset -> "-DSCALE=7.0"'
    assert "1 built" in summary(build(env=env))
    assert "1 cached" in summary(build(env=env))
    # Include folders in them join the search; target options are refused.
    other = tmp_path / "other"
    other.mkdir()
    (other / "tune.cuh").write_text("#define SCALE 9.0\n")
    flags_build = Build(run, tree, tmp_path, "nvcc")
    assert "1 built" in summary(flags_build(env={variable: f"-I {other}"}))
    assert set(flags_build.manifest(env={variable: f"-I {other}"})["inputs"]["headers"]) == {"<I:0>/tune.cuh"}
    result = flags_build(env={variable: "-arch=sm_80"})
    assert result.returncode == 2 and f"{variable}: -arch=sm_80 is not accepted" in result.stderr


def test_nvcc_ccbin_is_keyed(run, tree, tmp_path):
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}")
    build()
    gcc = shutil.which("gcc")
    assert build.reason(env={"NVCC_CCBIN": gcc}) == f'environment variable NVCC_CCBIN: unset -> "{gcc}"'


def fake_gcc(folder, version):
    """A gcc that nvcc can run (the real one) but that names another version."""
    folder.mkdir(parents=True, exist_ok=True)
    gcc = folder / "gcc"
    gcc.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "gcc (fake) {version}"; exit 0; }}\n'
                   f'exec {shutil.which("gcc")} "$@"\n')
    gcc.chmod(0o755)
    return gcc


def test_nvccs_host_compiler_version_is_keyed_wherever_it_comes_from(run, tree, tmp_path):
    # nvcc preprocesses with gcc and hands its version to cicc: another gcc,
    # another cubin. Found in PATH, named by -ccbin (a file or a folder), or by NVCC_CCBIN.
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}")
    report, _ = build.report()
    real = report["jobs"][0]
    assert "; host gcc " in json.loads((Path(real["entry"]) / "manifest.json").read_text())["inputs"]["compiler"]
    fake = tmp_path / "fakebin"
    fake_gcc(fake, "99.1")
    path = {"PATH": f"{fake}:{run.env['PATH']}"}
    reason = build.reason(env=path)
    assert reason.startswith("host compiler: gcc ") and reason.endswith(" -> gcc (fake) 99.1"), reason
    assert "sha256" not in reason  # another version: the versions say enough
    assert "1 built" in summary(build(env=path))
    assert build.reason(env=path) == "(cached)"
    # status starts no compiler: it keys with the version build recorded.
    status = run("status", "--compiler", "nvcc", "--cache-dir", build.cache,
                 f"--compiler-option=-I{tree.parent / 'inc'}", tree, env=path, check=0)
    row = next(line for line in status.stdout.splitlines() if line.startswith("sim.kernels.scale "))
    cuda_state = row.split("host; ")[-1]
    assert cuda_state == "built: sm_90", status.stdout
    fake_gcc(fake, "99.2")  # the same file, upgraded in place
    assert build.reason(env=path) == "host compiler: gcc (fake) 99.1 -> gcc (fake) 99.2"
    # Without the fake first in PATH, the first entry serves again.
    assert build.reason() == "(cached)"
    # -ccbin as a file and as a folder, and NVCC_CCBIN, take the same rule.
    other = fake_gcc(tmp_path / "otherbin", "98.0")
    for flags, env in [([f"--compiler-option=-ccbin={other}"], None),
                       ([f"--compiler-option=--compiler-bindir", f"--compiler-option={other.parent}"], None),
                       ([], {"NVCC_CCBIN": str(other)})]:
        manifest = build.manifest(*flags, env=env)
        assert "; host gcc (fake) 98.0 (sha256 " in manifest["inputs"]["compiler"], flags


def wrapper(path, runs, flags):
    """A site's wrapper script that runs `runs` with `flags` added."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec {runs} {flags} "$@"\n')
    path.chmod(0o755)
    return path


def edit_keeping_stat_times(path, old, new):
    """Same size, modification time set back: only the change time and content say it changed."""
    before = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.mark.parametrize("member", ["nvcc wrapper", "what the nvcc wrapper runs", "-ccbin wrapper", "NVCC_CCBIN wrapper"])
def test_the_compiler_files_that_run_are_keyed_by_content(run, tree, tmp_path, member):
    # The version line is not the compiler: a wrapper script that adds a flag
    # prints the same one. Each file that runs is keyed by its content.
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")).resolve()
    root = fake_toolkit(tmp_path)
    gcc = shutil.which("gcc")
    flags, env = ["--cuda-root", root, f"--compiler-option=-I{tree.parent / 'inc'}"], None
    if member == "nvcc wrapper":
        edited = wrapper(root / "bin" / "nvcc", f"{real_root}/bin/nvcc", "-DSCALE=2.0")
    elif member == "what the nvcc wrapper runs":
        edited = wrapper(tmp_path / "site" / "nvcc-flags", f"{real_root}/bin/nvcc", "-DSCALE=2.0")
        wrapper(root / "bin" / "nvcc", edited, "")
    elif member == "-ccbin wrapper":
        edited = wrapper(tmp_path / "ccbin" / "gccw", gcc, "-DSCALE=2.0")
        flags.append(f"--compiler-option=-ccbin={edited}")
    else:
        edited = wrapper(tmp_path / "ccbin" / "gccw", gcc, "-DSCALE=2.0")
        env = {"NVCC_CCBIN": str(edited)}
    build = Build(run, tree, tmp_path, "nvcc", *flags)
    assert "1 built" in summary(build(env=env))
    assert build.reason(env=env) == "(cached)"
    edit_keeping_stat_times(edited, "SCALE=2.0", "SCALE=3.0")
    reason = build.reason(env=env)
    part = "host compiler: gcc " if "ccbin" in member.lower() else "compiler: nvcc "
    assert reason.startswith(part) and "its file's content changed (sha256 " in reason, reason
    served = build.report(env=env)[0]["jobs"][0]
    assert served["state"] == "built"
    fresh = Build(run, tree, tmp_path / "fresh", "nvcc", *flags).report(env=env)[0]["jobs"][0]
    assert Path(served["artifacts"][0]).read_bytes() == Path(fresh["artifacts"][0]).read_bytes()
    assert build.reason(env=env) == "(cached)"


def test_a_missing_host_compiler_fails_the_nvcc_build_with_its_name(run, tree, tmp_path):
    build = Build(run, tree, tmp_path, "nvcc", "--compiler-option=-ccbin=/nonexistent/gcc-77")
    result = build(check=None)
    assert result.returncode != 0
    assert "nvcc's host compiler: /nonexistent/gcc-77 not found (-ccbin)" in result.stderr
    result = build("--compiler-option=-ccbin", f"--compiler-option={tmp_path}", check=None)
    assert f"nvcc's host compiler: folder {tmp_path} holds no gcc (-ccbin)" in result.stderr
    result = Build(run, tree, tmp_path, "nvcc")(env={"NVCC_CCBIN": "/nonexistent/gcc-77"}, check=None)
    assert "/nonexistent/gcc-77 not found (NVCC_CCBIN); point NVCC_CCBIN at a gcc" in result.stderr


@pytest.mark.parametrize("variable", ["CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "INCLUDES", "SYSTEM_INCLUDES",
                                      "PTXAS_FLAGS", "CUDAFE_FLAGS", "GCC_EXEC_PREFIX", "COMPILER_PATH"])
def test_variables_set_to_change_nvcc_builds_are_refused_naming_the_config_key(run, tree, tmp_path, variable):
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}")
    inc = tree.parent / "inc"
    value = {"INCLUDES": f"-I{inc}", "SYSTEM_INCLUDES": f"-isystem {inc}", "PTXAS_FLAGS": "-O0",
             "CUDAFE_FLAGS": "-DSCALE=3.0"}.get(variable, str(inc))
    for result in (build(env={variable: value}), build("--dry-run", env={variable: value})):
        assert result.returncode == 2, result.stderr
        instead = "-ccbin" if variable in ("GCC_EXEC_PREFIX", "COMPILER_PATH") else "config key `options`"
        assert f"{variable} is set" in result.stderr and instead in result.stderr
        assert f"unset {variable}" in result.stderr


@pytest.mark.parametrize("variable,value", [("NVVM_FLAGS", "-O0"), ("DEPENDENCIES_OUTPUT", "/nonexistent/deps.d"),
                                            ("SUNPRO_DEPENDENCIES", "/nonexistent/deps.d"),
                                            ("SITE_NVCC_WRAPPER_FLAGS", "-DSCALE=5.0")])
def test_other_variables_never_reach_the_compiler(run, tree, tmp_path, variable, value):
    # A site's nvcc wrapper that reads a variable of its own: the variable is
    # gone before nvcc starts, so the artifact is the one built without it.
    root = fake_toolkit(tmp_path)
    real = root / "bin" / "nvcc"
    real.write_text(real.read_text().replace("exec ", 'exec_flags="${SITE_NVCC_WRAPPER_FLAGS:-}"\nexec ', 1)
                    .replace('"$@"', '$exec_flags "$@"'))
    flags = ["--cuda-root", root, f"--compiler-option=-I{tree.parent / 'inc'}"]
    build = Build(run, tree, tmp_path, "nvcc", *flags)
    before = build.report()[0]["jobs"][0]
    assert build.reason(env={variable: value}) == "(cached)"
    fresh = Build(run, tree, tmp_path / "fresh", "nvcc", *flags)
    after = fresh.report(env={variable: value})[0]["jobs"][0]
    assert Path(after["artifacts"][0]).read_bytes() == Path(before["artifacts"][0]).read_bytes()


@pytest.mark.parametrize("spelling", [["--compiler-option=--options-file={f}"], ["--compiler-option=-optf", "--compiler-option={f}"],
                                      ["--compiler-option=-optf={f}"], ["--compiler-option=--options-file={g}"]])
@pytest.mark.parametrize("compiler", COMPILERS)
def test_an_options_files_content_is_in_the_key(run, tree, tmp_path, compiler, spelling):
    opts = tmp_path / "scale.opts"
    opts.write_text(f"-I {tree.parent / 'inc'} -DSCALE=3.0\n")
    outer = tmp_path / "outer.opts"  # an options file naming another
    outer.write_text(f"--options-file {opts}\n")
    flags = [s.format(f=opts, g=outer) for s in spelling]
    build = Build(run, tree, tmp_path, compiler, *flags)
    assert "1 built" in summary(build())
    assert build.reason() == "(cached)"
    opts.write_text(f"-I {tree.parent / 'inc'} -DSCALE=4.0\n")
    assert build.reason() == "compiler option -DSCALE=4.0 added"
    assert "1 built" in summary(build())
    opts.write_text("-arch=sm_80\n")
    result = build(check=None)
    assert result.returncode == 2 and "-arch=sm_80 is not accepted" in result.stderr
    assert f"options file {opts}" in result.stderr


@pytest.mark.parametrize("option", ["-Xcompiler=-imacros,{f}", "-Xcompiler=@{f}", "-Xcompiler=-include,{f}",
                                    "-Xcompiler=--sysroot={d}", "-Xcompiler=-iprefix,{d}", "-Xcompiler=-specs={f}",
                                    "-Xcompiler=-B{d}", "--compiler-options=-iwithprefix,{d}", "-Xptxas=--options-file={f}",
                                    "-Xptxas=-arch=sm_80", "@{f}", "-Xcompiler=--frobnicate"])
def test_options_that_read_files_or_are_unknown_are_refused_before_anything_compiles(run, tree, tmp_path, option):
    macros = tmp_path / "macros.h"
    macros.write_text("#define SCALE 3.0\n")
    text = option.format(f=macros, d=tmp_path)
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}", f"--compiler-option={text}")
    for result in (build(check=None), build("--dry-run", check=None)):
        assert result.returncode == 2, result.stderr
        assert "is not accepted" in result.stderr and "scanner bug" not in result.stderr
    assert not (tmp_path / "cache").exists() or "built" not in build("--dry-run", check=None).stdout


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_verbatim_option_is_keyed_by_spelling_and_warned_about(run, tree, tmp_path, compiler):
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option=-I{tree.parent / 'inc'}")
    build()
    assert build.reason("--verbatim-option=-DVERBATIM=1") == "compiler option -DVERBATIM=1 added"
    result = build("--verbatim-option=-DVERBATIM=1")
    assert "1 built" in summary(result)
    assert "passed verbatim" in result.stderr
    pyproject = tree.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'verbatim-options = ["-DVERBATIM=1"]\n')
    assert build.reason() == "(cached)"


@pytest.mark.parametrize("found_by", ["CUDA_PATH", "CUDA_HOME", "PATH"])
def test_the_toolkit_is_found_as_cupy_finds_it_and_named(run, tree, tmp_path, found_by):
    root = fake_toolkit(tmp_path)
    env = {"CUDA_PATH": "", "CUDA_HOME": ""}
    env[found_by] = f"{root / 'bin'}:{run.env['PATH']}" if found_by == "PATH" else str(root)
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}")
    out = build("--dry-run", env=env).stdout
    named = "nvcc in PATH" if found_by == "PATH" else f"${found_by}"
    # fake_toolkit's nvcc is a wrapper script: in PATH, it names the toolkit it runs.
    if found_by == "PATH":
        root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")).resolve()
    assert f"CUDA toolkit: {root} (found by {named}" in out, out
    status = run("status", "--compiler", "nvcc", "--cache-dir", build.cache, tree, env=env, check=None)
    assert f"CUDA toolkit: {root} (found by {named}" in status.stdout, status.stdout
    # CUDA_PATH wins over CUDA_HOME, as in CuPy.
    if found_by == "CUDA_HOME":
        other = tmp_path / "other"
        other.mkdir()
        out = build("--dry-run", env={**env, "CUDA_PATH": str(root)}).stdout
        assert "(found by $CUDA_PATH)" in out


def path_nvcc(tmp_path, member, real_root):
    """A folder for PATH whose nvcc is `member`: a link, a link to a folder, or a wrapper script."""
    bin_dir = tmp_path / member.replace(" ", "-") / "bin"
    if member == "folder link":
        bin_dir.parent.symlink_to(real_root)
        return bin_dir
    bin_dir.mkdir(parents=True)
    nvcc = bin_dir / "nvcc"
    if member == "nvcc link":
        nvcc.symlink_to(real_root / "bin" / "nvcc")
    elif member == "wrapper script":
        wrapper(nvcc, f'"{real_root}/bin/nvcc"', "")
    elif member == "link to a wrapper script":
        nvcc.symlink_to(wrapper(tmp_path / "site" / "nvcc-wrapper", f"{real_root}/bin/nvcc", ""))
    else:  # a wrapper whose target is a variable: what it runs cannot be known
        wrapper(nvcc, '"$SITE_NVCC"', "")
    return bin_dir


@pytest.mark.parametrize("member", ["nvcc link", "folder link", "wrapper script", "link to a wrapper script"])
def test_the_nvcc_in_path_names_the_toolkit_it_runs(run, tree, tmp_path, member):
    # As CuPy takes the real path of what it loads: links resolved, and a
    # wrapper script's `exec` followed to the toolkit it runs.
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")).resolve()
    env = {"CUDA_PATH": "", "CUDA_HOME": "", "PATH": f"{path_nvcc(tmp_path, member, real_root)}:/usr/bin:/bin"}
    build = Build(run, tree, tmp_path, "nvrtc", f"--compiler-option=-I{tree.parent / 'inc'}")
    out = build("--dry-run", env=env).stdout
    assert f"CUDA toolkit: {real_root} (found by nvcc in PATH" in out, out
    if "script" in member:
        assert f"a script running {real_root}/bin/nvcc)" in out, out
    assert "1 built" in summary(build(env=env))


@pytest.mark.parametrize("command", ["build", "status"])
def test_an_nvcc_in_path_whose_toolkit_cannot_be_known_is_refused_naming_cuda_home(run, tree, tmp_path, command):
    env = {"CUDA_PATH": "", "CUDA_HOME": "",
           "PATH": f"{path_nvcc(tmp_path, 'unknown wrapper', Path('/nonexistent'))}:/usr/bin:/bin"}
    args = (["--dry-run", "--only", "cuda"] if command == "build" else []) + [f"--compiler-option=-I{tree.parent / 'inc'}"]
    result = run(command, *args, "--cache-dir", tmp_path / "cache", tree, env=env, check=None)
    assert result.returncode != 0
    assert "lies in no CUDA toolkit" in result.stderr and "set CUDA_HOME" in result.stderr, result.stderr
    # Naming the toolkit is the way out.
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")).resolve()
    assert run(command, *args, "--cache-dir", tmp_path / "cache", tree, env={**env, "CUDA_HOME": str(real_root)},
               check=None).returncode == 0


@pytest.mark.parametrize("headers", ["none", "a copy"])
def test_an_nvcc_in_path_that_wraps_another_toolkits_reads_that_toolkits_headers(run, tree, tmp_path, headers):
    # A site's wrapper script in PATH (`exec /opt/cuda-13.0/bin/nvcc "$@"`): the folder
    # above it is no toolkit, or holds a copy of one's headers (/usr/local/include on
    # some machines). nvcc reads its own toolkit's headers: no "scanner bug".
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    root = tmp_path / "site"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "nvcc").write_text(f'#!/bin/sh\nexec {real_root.resolve()}/bin/nvcc "$@"\n')
    (root / "bin" / "nvcc").chmod(0o755)
    shutil.copy(real_root / "bin" / "nvcc.profile", root / "bin" / "nvcc.profile")
    if headers == "a copy":
        shutil.copytree(real_root / "include", root / "include", symlinks=True)
    else:
        (root / "include").mkdir()
    env = {"CUDA_PATH": "", "CUDA_HOME": "", "PATH": f"{root / 'bin'}:{run.env['PATH']}"}
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}")
    result = build(env=env, check=None)
    assert "scanner bug" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 0 and "1 built" in summary(result), result.stdout + result.stderr
    assert build.reason(env=env) == "(cached)"
    # The wrapper's folder has no nvcc.profile of the toolkit that runs: the
    # variables every profile extends are refused all the same.
    for variable in ("INCLUDES", "PTXAS_FLAGS"):
        refused = build(env={**env, variable: "-O0"}, check=None)
        assert refused.returncode == 2 and f"{variable} is set" in refused.stderr, refused.stderr


def fake_toolkit(tmp_path):
    """A toolkit whose nvcc runs the real one, with an nvcc.profile of its own."""
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    root = tmp_path / "toolkit"
    (root / "bin").mkdir(parents=True)
    (root / "include").symlink_to(real_root / "include")
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text(f'#!/bin/sh\nexec {real_root}/bin/nvcc "$@"\n')
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IEXEC)
    shutil.copy(real_root / "bin" / "nvcc.profile", root / "bin" / "nvcc.profile")
    return root


def shadow_toolkit(real_root, root, header, text):
    """A toolkit at `root` that is `real_root` through links but for one header (a path under include/)."""
    folder, real = root, real_root
    parts = Path("include", header).parts
    for part in parts[:-1]:
        folder, real = folder / part, real / part
        folder.mkdir(parents=True, exist_ok=True)
        for entry in real.iterdir():
            if entry.name != parts[parts.index(part) + 1] and not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry)
    for entry in real_root.iterdir():
        if entry.name != "include" and not (root / entry.name).exists():
            (root / entry.name).symlink_to(entry)
    (folder / parts[-1]).write_text(text)
    return root


@pytest.mark.parametrize("header", ["vector_types.h", "cuda/std/version", "forced vector_types.h"])
def test_toolkit_headers_a_kernel_names_are_keyed_by_content(run, tree, tmp_path, header):
    # Two toolkits that share one libnvrtc (a CCCL from pip or conda beside
    # the system toolkit) differ in a header: each serves its own cubin.
    real_root = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")).resolve()
    forced = header.startswith("forced ")
    name = header.removeprefix("forced ")
    in_cccl = (real_root / "include" / "cccl" / name).exists() and not (real_root / "include" / name).exists()
    path = Path("cccl", name) if in_cccl else Path(name)
    kernel = tree / "sim" / "kernels" / "scale" / "scale_cuda.cu"
    if not forced:
        kernel.write_text(f"#include <{name}>\n" + kernel.read_text())
    text = (real_root / "include" / path).read_text()
    other = shadow_toolkit(real_root, tmp_path / "other", path, text + "\n#define SCALE 3.0\n")
    flags = [f"--compiler-option=-I{tree.parent / 'inc'}"] + ([f"--compiler-option=-include={name}"] if forced else [])
    build = Build(run, tree, tmp_path, "nvrtc", *flags)
    mine = build.report(env={"CUDA_PATH": str(real_root)})[0]["jobs"][0]
    assert f"<cuda>/{name}" in json.loads((Path(mine["entry"]) / "manifest.json").read_text())["inputs"]["headers"]
    env = {"CUDA_PATH": str(other)}
    assert build.reason(env=env) == f"header <cuda>/{name} changed"
    theirs = build.report(env=env)[0]["jobs"][0]
    assert theirs["state"] == "built"
    assert Path(theirs["artifacts"][0]).read_bytes() != Path(mine["artifacts"][0]).read_bytes()
    assert build.reason(env={"CUDA_PATH": str(real_root)}) == "(cached)"
    assert build.reason(env=env) == "(cached)"


def test_nvcc_profile_is_keyed(run, tree, tmp_path):
    root = fake_toolkit(tmp_path)
    build = Build(run, tree, tmp_path, "nvcc", "--cuda-root", root, f"--compiler-option=-I{tree.parent / 'inc'}")
    assert "1 built" in summary(build())
    profile = root / "bin" / "nvcc.profile"
    profile.write_text(profile.read_text() + "PTXAS_FLAGS += -O0\n")
    assert build.reason() == "nvcc.profile changed"


def test_nvrtc_append_flags_is_keyed(run, tree, tmp_path):
    build = Build(run, tree, tmp_path, "nvrtc", f"--compiler-option=-I{tree.parent / 'inc'}")
    build()
    assert build.reason(env={"NVRTC_APPEND_FLAGS": "-DX"}) == 'environment variable NVRTC_APPEND_FLAGS: unset -> "-DX"'
    assert build.reason(env={"NVCC_APPEND_FLAGS": "-DX", "CPATH": "/x"}) == "(cached)"


def test_nvcc_reads_exactly_the_headers_the_key_holds_for_the_example(run, example, tmp_path):
    report, result = run.json("build", "--only", "cuda", "--compiler", "nvcc", "--cache-dir", tmp_path / "cache",
                              example, check=0)
    assert report["ok"], result.stderr
    built = jobs_by_state(report, "built")
    assert len(built) == 6
    for job in built:
        manifest = json.loads((Path(job["entry"]) / "manifest.json").read_text())
        assert set(manifest["compiler_dependencies"]) == set(manifest["inputs"]["headers"]), job["module"]
