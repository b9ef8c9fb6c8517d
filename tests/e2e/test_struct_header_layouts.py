"""The faults a new user's trial found in reading a struct header's layouts: a struct the reader
cannot lay out fails every command loudly, naming the header's line, and a header's #ifdef
alternatives are decided with the kernels' defines. (The unit tests compare every layout the
reader computes with g++'s: tests/unit/test_struct_reader.cpp.)"""

from test_struct_header_trial import fixed_writer_tree
from test_struct_header_writers import configure


# 1: a struct the reader cannot lay out fails loudly, naming the header's line and the construct.
def test_a_struct_the_reader_cannot_lay_out_fails_every_command_naming_its_line(run, tmp_path):
    cases = {
        "bit-field": ("struct Args {\n  unsigned flags : 3;\n};\n", 2, "member 'flags' is a bit-field"),
        "template": ("template <typename T>\nstruct Box { T v; };\n", 2, "template struct Box"),
        "unknown type": ("struct Args {\n  double x;\n  float3 v;\n};\n", 3, "unknown type 'float3'"),
    }
    for what, (text, line, says) in cases.items():
        root = tmp_path / what.replace(" ", "_")
        source = f"def write(path):\n    open(path, 'w').write({text!r})\n"
        tree = fixed_writer_tree(root, "fixed", source, {"args.cuh": ("write", text)})
        result = run("check-signatures", tree)
        assert result.returncode == 1, (what, result.stdout, result.stderr)
        assert f"{tree}/sim/args.cuh:{line}: " in result.stdout and says in result.stdout, (what, result.stdout)
        assert "cannot lay out" in result.stdout
        status = run("status", "--only", "cuda", "--check-signatures", "--cache-dir", root / "cache", tree)
        assert status.returncode == 1 and says in status.stdout + status.stderr, (what, status.stdout, status.stderr)


# 1: what has a clear C layout is read, and passes.
def test_a_header_of_every_clear_construct_passes(run, tmp_path):
    text = ("#pragma once\n#include <cstdint>\nnamespace sim {\nenum class Kind : std::uint8_t { a, b };\n"
            "typedef struct { double x[3]; int a, b = 0; } Point;\n"
            "struct Args { alignas(16) Point p; Kind kind; const std::int64_t n{2}; double** m; "
            "union { int i; float f; }; unsigned long long u; };\n}\n")
    source = f"def write(path):\n    open(path, 'w').write({text!r})\n"
    tree = fixed_writer_tree(tmp_path, "fixed", source, {"args.cuh": ("write", text)})
    result = run("check-signatures", tree)
    assert result.returncode == 0, result.stdout + result.stderr


# 2: #ifdef alternatives in one header are decided with the kernels' defines.
def test_ifdef_alternatives_in_one_header_are_decided_with_the_configured_defines(run, tmp_path):
    text = ("#ifndef ARGS_CUH\n#define ARGS_CUH\n#ifdef USE_FLOAT\nstruct Args { float x; int n; };\n#else\n"
            "struct Args { double x; int n; };\n#endif\n#if WIDTH > 2\nstruct Wide { int w : 3; };\n#endif\n#endif\n")
    source = f"def write(path):\n    open(path, 'w').write({text!r})\n"
    tree = fixed_writer_tree(tmp_path, "fixed", source, {"args.cuh": ("write", text)})
    assert run("check-signatures", tree).returncode == 0  # no "defined twice", no false failure
    configure(tmp_path, {"src/sim/args.cuh": "sim.fixed:write"}, extra='options = ["-DUSE_FLOAT", "-DWIDTH=3"]')
    result = run("check-signatures", tree)
    assert result.returncode == 1
    assert f"{tree}/sim/args.cuh:9: struct Wide: member 'w' is a bit-field" in result.stdout, result.stdout
