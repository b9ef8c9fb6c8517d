"""Doors a new-user trial found open (issue 39, second pass): directives the
include scanner must read as the compiler does, nvcc's comma lists, options
classified by the compilers' own tables, options whose meaning is the build
machine, and the scanner's advice.

Each test uses test_cache_inputs' one-kernel tree: scale_cuda.cu includes
"tune.cuh", which defines SCALE unless it is defined.
"""

import pytest

from test_cache_inputs import COMPILERS, Build, summary, tree  # noqa: F401 (tree is a fixture)

# -- directives as the standard spells them -----------------------------------

DIRECTIVE_SPELLINGS = {
    "digraph": '%:include "a.cuh"\n',
    "digraph, spaced, angle": "%: include <a.cuh>\n",
    "comment after #": '#/**/include "a.cuh"\n',
    "comment over a line break": '# /* one\n two */ include "a.cuh"\n',
    "line splice after #": '#\\\ninclude "a.cuh"\n',
}


@pytest.mark.parametrize("spelling", sorted(DIRECTIVE_SPELLINGS))
@pytest.mark.parametrize("compiler,folder_option", [("nvrtc", "-I"), ("nvcc", "-I"), ("nvcc", "-isystem=")])
def test_an_include_in_any_standard_spelling_is_followed_and_keyed(run, tree, tmp_path, spelling, compiler, folder_option):
    # In an -isystem folder nvcc's dependency list leaves the header out, so
    # the scanner alone keeps it in the key.
    inc = tree.parent / "inc"
    (inc / "tune.cuh").write_text(DIRECTIVE_SPELLINGS[spelling])
    (inc / "a.cuh").write_text("#define SCALE 2.0\n")
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option={folder_option}{inc}")
    result = build()
    assert "1 built" in summary(result), result.stderr
    assert "scanner bug" not in result.stdout + result.stderr
    (inc / "a.cuh").write_text("#define SCALE 3.0\n")
    reason = build.reason()
    assert reason.startswith("header ") and reason.endswith("/a.cuh changed"), reason
    assert "1 built, 0 cached" in summary(build())


SYMLINKED_PARENT_STEPS = {
    "folder link, ../": ("sub/a.cuh", "../b.cuh"),
    "folder link, ./../": ("sub/a.cuh", "./../b.cuh"),
    "two links deep": ("sub/deeper/a.cuh", "../../b.cuh"),
}


@pytest.mark.parametrize("case", sorted(SYMLINKED_PARENT_STEPS))
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_parent_step_through_a_symlinked_folder_is_resolved_as_the_compiler_does(run, tree, tmp_path, case, compiler):
    # inc/sub links to real/sub: the compiler opens sub/../b.cuh as real/b.cuh,
    # not inc/b.cuh (the lexical answer, here a decoy).
    included, parent_step = SYMLINKED_PARENT_STEPS[case]
    inc, real = tree.parent / "inc", tmp_path / "real"
    header = real / included
    header.parent.mkdir(parents=True)
    header.write_text(f'#include "{parent_step}"\n')
    (real / "b.cuh").write_text("#define SCALE 2.0\n")
    (inc / "b.cuh").write_text("#define SCALE 9.0\n")
    (inc / "sub").symlink_to(real / "sub")
    (inc / "tune.cuh").write_text(f'#include "{included}"\n')
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option=-I{inc}")
    result = build()
    assert "1 built" in summary(result), result.stderr
    assert "scanner bug" not in result.stdout + result.stderr
    (real / "b.cuh").write_text("#define SCALE 3.0\n")
    assert build.reason().endswith("real/b.cuh changed")
    assert "1 built, 0 cached" in summary(build())


# -- the scanner's advice -----------------------------------------------------

@pytest.mark.parametrize("branch", ["#if 0", "#ifndef __CUDACC_RTC__", "#ifdef NEVER_DEFINED"])
def test_a_missing_include_in_a_skipped_branch_names_the_way_out(run, tree, tmp_path, branch):
    inc = tree.parent / "inc"
    (inc / "tune.cuh").write_text(f'{branch}\n#include "missing.cuh"\n#endif\n#define SCALE 2.0\n')
    build = Build(run, tree, tmp_path, "nvrtc", f"--compiler-option=-I{inc}")
    report, _ = build.report("--dry-run")
    (job,) = report["jobs"]
    assert job["state"] == "failed"
    assert 'tune.cuh:2: error: #include "missing.cuh" not found (the scan follows every #if branch' in job["log"]
    assert "follows every #if branch" in job["log"]
    assert '#if __has_include("missing.cuh")' in job["log"]


@pytest.mark.parametrize("directive", ["#define Q(x) #x\n#include Q(a.cuh)", "#define CAT(a, b) a##b\n#include CAT(A, B)",
                                       "#include NOWHERE"])
def test_the_advice_for_an_unresolved_computed_include_is_valid_c(run, tree, tmp_path, directive):
    inc = tree.parent / "inc"
    (inc / "tune.cuh").write_text(directive + "\n#define SCALE 2.0\n")
    build = Build(run, tree, tmp_path, "nvrtc", f"--compiler-option=-I{inc}")
    report, _ = build.report("--dry-run")
    (job,) = report["jobs"]
    assert job["state"] == "failed" and "write the header's name in quotes" in job["log"]
    macro = "NOWHERE" if "NOWHERE" in directive else "HEADER"
    assert f'#define {macro} "name.cuh"' in job["log"] and f"#include {macro} " in job["log"]
    assert "#define Q(" not in job["log"] and "#define CAT(" not in job["log"]


# -- nvcc's comma lists -------------------------------------------------------

@pytest.mark.parametrize("spelling", ["-I{a},{b}", "-I={a},{b}", "--include-path={a},{b}", "-isystem={a},{b}",
                                      "--system-include={a},{b}"])
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_comma_list_of_folders_is_split_as_nvcc_splits_it(run, tree, tmp_path, spelling, compiler):
    empty, inc = tmp_path / "empty", tree.parent / "inc"
    empty.mkdir()
    build = Build(run, tree, tmp_path, compiler, "--compiler-option=" + spelling.format(a=empty, b=inc))
    result = build()
    assert "1 built" in summary(result), result.stderr
    assert "scanner bug" not in result.stdout + result.stderr
    manifest = build.manifest()
    assert [h for h in manifest["inputs"]["headers"] if h.endswith("/tune.cuh")], manifest["inputs"]["headers"]
    (inc / "tune.cuh").write_text("#define SCALE 3.0\n")
    assert build.reason().endswith("/tune.cuh changed")
    assert "1 built, 0 cached" in summary(build())


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_comma_list_of_forced_includes_keys_each_file(run, tree, tmp_path, compiler):
    first, second = tmp_path / "first.h", tmp_path / "second.h"
    first.write_text("// nothing\n")
    second.write_text("#define SCALE 3.0\n")
    build = Build(run, tree, tmp_path, compiler, f"--compiler-option=-I{tree.parent / 'inc'}",
                  f"--compiler-option=--pre-include={first},{second}")
    assert "1 built" in summary(build())
    second.write_text("#define SCALE 4.0\n")
    assert build.reason().endswith("second.h changed")


# -- options classified by the compilers' own tables ---------------------------

@pytest.mark.parametrize("option", ["-Wp,-imacros,{f}", "-Wall", "-Wl,-rpath,{d}", "-Wa,-I{d}", "-Wextra"])
def test_nvcc_level_w_options_are_only_nvccs_own(run, tree, tmp_path, option):
    macros = tmp_path / "macros.h"
    macros.write_text("#define SCALE 3.0\n")
    text = option.format(f=macros, d=tmp_path)
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}", f"--compiler-option={text}")
    for result in (build(check=None), build("--dry-run", check=None)):
        assert result.returncode == 2, result.stderr
        assert f"{text} is not accepted: nvcc's only -W options are its own" in result.stderr
        assert "-Xcompiler=-W" in result.stderr and "--verbatim-option" in result.stderr


@pytest.mark.parametrize("option", ["-Wreorder", "-Wno-deprecated-gpu-targets", "--Werror=all-warnings",
                                    "-Werror=cross-execution-space-call"])
def test_nvccs_own_w_options_are_keyed(run, tree, tmp_path, option):
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}")
    assert "1 built" in summary(build())
    assert build.reason(f"--compiler-option={option}") == f"compiler option {option} added"


@pytest.mark.parametrize("option", ["-Xcompiler=-fmodule-mapper={f}", "-Xcompiler=-fself-test={d}",
                                    "-Xcompiler=-fprofile-dir={d}", "-Xcompiler=-fmodules-ts",
                                    "-Xcompiler=-fplugin-arg-x-y=z", "-Xcompiler=-flto-incremental={d}",
                                    "-Xcompiler=-imultiarch,x86_64-linux-gnu", "-Xcompiler=-Wa,-I{d}",
                                    "--compiler-options=-O2,-fprofile-use={d}"])
def test_host_options_that_read_files_or_folders_are_refused(run, tree, tmp_path, option):
    mapper = tmp_path / "mapper.txt"
    mapper.write_text("\n")
    text = option.format(f=mapper, d=tmp_path)
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}", f"--compiler-option={text}")
    for result in (build(check=None), build("--dry-run", check=None)):
        assert result.returncode == 2, result.stderr
        assert "is not accepted" in result.stderr and "scanner bug" not in result.stderr


# -- options whose meaning is the build machine ---------------------------------

@pytest.mark.parametrize("option", ["-Xcompiler=-march=native", "-Xcompiler=-mtune=native", "-Xcompiler=-O2,-mcpu=native",
                                    "--compiler-options=-march=host"])
def test_host_options_that_mean_this_machines_cpu_are_refused(run, tree, tmp_path, option):
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}", f"--compiler-option={option}")
    for result in (build(check=None), build("--dry-run", check=None)):
        assert result.returncode == 2, result.stderr
        assert "is not accepted" in result.stderr and "the CPU of the machine that builds" in result.stderr
        assert "=x86-64-v3" in result.stderr


def test_a_named_cpu_is_keyed(run, tree, tmp_path):
    build = Build(run, tree, tmp_path, "nvcc", f"--compiler-option=-I{tree.parent / 'inc'}")
    assert "1 built" in summary(build())
    assert build.reason("--compiler-option=-Xcompiler=-march=x86-64-v3") == "compiler option -Xcompiler=-march=x86-64-v3 added"


# -- the environment ----------------------------------------------------------

@pytest.mark.parametrize("variable", ["CPATH", "CPLUS_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH"])
def test_gcc_variables_are_refused_by_host_builds(run, tree, tmp_path, variable):
    result = run("build", "--only", "host", "--cache-dir", tmp_path / "cache", tree, env={variable: str(tmp_path)},
                 check=None)
    assert result.returncode == 2, result.stderr
    assert f"{variable} is set: the host compiler (Pyccel's gcc) would read it" in result.stderr
    assert f"unset {variable}" in result.stderr


@pytest.mark.parametrize("variable", ["CPATH", "GCC_EXEC_PREFIX", "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"])
def test_gcc_variables_nvrtc_never_reads_are_removed_without_a_word(run, tree, tmp_path, variable):
    build = Build(run, tree, tmp_path, "nvrtc", f"--compiler-option=-I{tree.parent / 'inc'}")
    assert "1 built" in summary(build())
    result = build(env={variable: str(tmp_path / "x")})
    assert "0 built, 1 cached" in summary(result) and variable not in result.stderr
