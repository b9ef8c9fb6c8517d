#include "signatures/signatures.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("python_signature_reader");

using namespace ck;
using Status = SignatureRead::Status;
using Names = std::vector<std::string>;

namespace {

void check_found(const std::string& source, const Names& names, int line,
                 PythonDefinition which = PythonDefinition::last)
{
    SignatureRead r = read_python_signature(source, "push", which);
    INFO(source);
    INFO(r.reason);
    REQUIRE(r.status == Status::found);
    CHECK(r.parameters == names);
    CHECK(r.line == line);
}

}  // namespace

TEST_CASE("a Pyccel kernel with string annotations and a decorator with arguments")
{
    check_found(
        "from pyccel.decorators import stack_array\n\n"
        "@stack_array('dfm', \"b_form\")\n"
        "def push(dt: float, stage: int, args_markers: 'MarkerArguments', b2_1: 'float[:,:,:]'):\n"
        "    pass\n",
        {"dt", "stage", "args_markers", "b2_1"}, 4);
}

TEST_CASE("annotations as expressions, defaults, lambdas and markers")
{
    check_found("def push(x: float[:, :], n: int = len((1, 2)), *, scale=1.0, **options): pass\n", {"x", "n"}, 1);
    check_found("def push(a, b, /, c, d=lambda u, v: (u, v), *rest, e, f=2): pass\n", {"a", "b", "c", "d"}, 1);
    check_found("def push(x: dict[str, 'list[int]'] = {'a': [1, 2]}, y: 'int' = 3,) -> 'None': pass\n", {"x", "y"}, 1);
    check_found("def push[T](x: T, n: int): pass\n", {"x", "n"}, 1);
    check_found("def push(): pass\n", {}, 1);
}

TEST_CASE("multi-line signatures with comments and strings that look like code")
{
    check_found(
        "TEXT = '''\ndef push(wrong): pass\n'''\n"
        "def push(  # the kernel (host side)\n"
        "    x,  # positions, def push(not_this)\n"
        "    v: 'float[:]',  # velocities )\n"
        "    # a comment line with ( and [\n"
        "    dt = f\"{1 + 2:>{3}}\",\n"
        "    n=\\\n 4,\n"
        "):\n    return x\n",
        {"x", "v", "dt", "n"}, 4);
    check_found("s = f\"{'}'}\"; t = f'{x!r:}}>10}'\ndef push(x): pass\n", {"x"}, 2);
}

TEST_CASE("only the top-level function: methods, nested functions and indented ones are ignored")
{
    check_found(
        "class Kernels:\n    def push(self, x): pass\n\n"
        "def outer():\n    def push(inner): pass\n\n"
        "if True:\n    def push(maybe): pass\n\n"
        "async def push(x, n): pass\n",
        {"x", "n"}, 10);
    SignatureRead r = read_python_signature("class A:\n    def push(self, x): pass\n", "push");
    CHECK(r.status == Status::not_found);
    CHECK(r.line == 2);
}

TEST_CASE("several definitions: a module keeps the last, a stub the first")
{
    std::string source = "def push(a): pass\n\ndef push(b): pass\n";
    check_found(source, {"b"}, 3, PythonDefinition::last);
    check_found(source, {"a"}, 1, PythonDefinition::first);
}

TEST_CASE("a Pyccel stub")
{
    check_found(
        "#$ header metavar printer_imports='numpy'\nimport numpy\n\n"
        "def push(x : 'float[:]', v : 'float[:]', dt : 'float', n : 'int') -> None:\n    ...\n",
        {"x", "v", "dt", "n"}, 4, PythonDefinition::first);
}

TEST_CASE("names that are only imported or assigned, and names that are missing")
{
    SignatureRead imported = read_python_signature("import numpy\nfrom .impl import (\n    push,\n)\n", "push");
    CHECK(imported.status == Status::unreadable);
    CHECK(imported.line == 2);
    CHECK(imported.reason.find("imported") != std::string::npos);
    SignatureRead assigned = read_python_signature("push = make_kernel()\n", "push");
    CHECK(assigned.status == Status::unreadable);
    CHECK(assigned.reason.find("assigned") != std::string::npos);
    SignatureRead missing = read_python_signature("def pull(x): pass\n", "push");
    CHECK(missing.status == Status::not_found);
    CHECK(missing.reason == "no top-level function 'push'");
    // A def with the name wins over a later re-binding, as numba users write it.
    check_found("def push(x): pass\npush = njit(push)\n", {"x"}, 1);
}

TEST_CASE("the binding Python keeps is read: an alias to another function of the module, the last binding")
{
    // cunumpy calls getattr(module, "push"): after `push = _fast`, that is _fast.
    check_found("def push(x, n): pass\n\ndef _fast(y, m): pass\n\npush = _fast\n", {"y", "m"}, 3);
    check_found("def _a(p): pass\n_b = _a\npush = _b\n", {"p"}, 1);  // a chain
    check_found(
        "def push(x): pass\npush: Callable = _impl\ndef _impl(late): pass\n"  // _impl is bound after
        "def _impl(q): pass\n",
        {"x"}, 1, PythonDefinition::first);
    SignatureRead early = read_python_signature("push = _impl\ndef _impl(late): pass\n", "push");
    CHECK(early.status == Status::unreadable);
    CHECK(early.reason.find("defines no '_impl' before it") != std::string::npos);
    SignatureRead loop = read_python_signature("a = b\nb = a\npush = a\n", "push");
    CHECK(loop.status == Status::unreadable);
    SignatureRead wrapped = read_python_signature("def push(x): pass\npush = make(push, 2)\n", "push");
    CHECK(wrapped.status == Status::unreadable);  // not a plain wrapper of the function
    CHECK(wrapped.line == 2);
    SignatureRead reimported = read_python_signature("def push(x): pass\nfrom .fast import push\n", "push");
    CHECK(reimported.status == Status::unreadable);
    CHECK(reimported.reason.find("imported") != std::string::npos);
    check_found("from .fast import push as _push\nx, y = 1, 2\nd[push] = 1\ndef push(z): pass\n", {"z"}, 4);
}

TEST_CASE("a def in a module-level if or try block binds the module's name")
{
    check_found("try:\n    from numba import njit\nexcept ImportError:\n    def push(a, b): pass\n", {"a", "b"}, 4);
    check_found("if HAVE_X:\n    def push(a): pass\nelse:\n    def push(a): pass\n", {"a"}, 4);
    // Branches that differ: which one runs is the program's business, so it is said, not guessed.
    SignatureRead branches =
        read_python_signature("if HAVE_X:\n    def push(a): pass\nelse:\n    def push(b): pass\n", "push");
    CHECK(branches.status == Status::unreadable);
    CHECK(branches.conditional);
    CHECK(branches.line == 2);
    CHECK(branches.reason.find("lines 2, 4") != std::string::npos);
    SignatureRead maybe = read_python_signature("def push(x, n): pass\nif FAST:\n    push = _fast\n", "push");
    CHECK(maybe.conditional);
    // A later unconditional def settles it.
    check_found("if FAST:\n    def push(a): pass\ndef push(z): pass\n", {"z"}, 3);
    SignatureRead in_class = read_python_signature("if X:\n    class K:\n        def push(self): pass\n", "push");
    CHECK(in_class.status == Status::not_found);
}

TEST_CASE("parameter lists that do not parse")
{
    SignatureRead r = read_python_signature("def push(x, (a, b)): pass\n", "push");
    CHECK(r.status == Status::unreadable);
    CHECK(r.reason.find("parameter 2") != std::string::npos);
    CHECK(read_python_signature("def push(x,\n", "push").status == Status::unreadable);
    CHECK(read_python_signature("def push:\n", "push").status == Status::unreadable);
}

TEST_SUITE_END();
