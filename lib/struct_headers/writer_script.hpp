// The Python that runs one struct header's writer (header_check.hpp), as
// `python -c <script> <request.json> <answer.json>` in the writer's source
// root: sys.path and the working folder are those of the regenerate command
// `cd <source root> && python -c 'from m import f; f("pkg/args.cuh")'`.
//
// Request: {"writer", "scratch" (the path to write: a scratch folder and the
// header's own file name, so a guard derived from the name is the header's),
// "header", "shown", "timeout"}. Answer: {"same", "missing", "diff"} or
// {"error", "wrote_nothing"}, with "files" (what the writer's process read
// outside the standard library: every file it opened and every Python source
// it imported) and "absent" (files it tried to open that did not exist, and
// where each import that failed would have found its module): a passed
// check holds while the files keep their digests and the absent stay absent.
//
// The timeout is SIGALRM with its default action: it ends a writer stuck in
// C code too, and the parent reports exit 128 + SIGALRM by name.
#pragma once

namespace ck {

inline constexpr const char* struct_header_writer_script = R"PY(
import difflib, importlib, importlib.machinery, json, os, signal, sys, sysconfig, traceback
request = json.load(open(sys.argv[1]))
signal.alarm(request["timeout"])
ignored = {os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")}
ignored.add(os.path.realpath(os.path.dirname(request["scratch"])) + os.sep)
ignored.add(os.path.realpath(os.path.dirname(sys.argv[1])) + os.sep)
opened, looked_for = set(), set()

def audit(event, args):
    if event == "open" and isinstance(args[0], (str, bytes)):
        opened.add(os.path.abspath(os.fsdecode(args[0])))

class ImportMisses:
    """Last on sys.meta_path: asked only when no finder found a module."""
    @staticmethod
    def find_spec(name, path=None, target=None):
        tail = name.rpartition(".")[2]
        for folder in (sys.path if path is None else path):
            if isinstance(folder, str) and os.path.isdir(folder or "."):
                base = os.path.join(os.path.abspath(folder or "."), tail)
                looked_for.add(base)  # a folder: a package or a namespace package
                for suffix in [".py", ".pyc"] + importlib.machinery.EXTENSION_SUFFIXES:
                    looked_for.add(base + suffix)
        return None

def outside(path):
    real = os.path.realpath(path)
    return not any(real.startswith(folder) for folder in ignored)

def error_text(error):
    lines = "".join(traceback.format_exception_only(type(error), error)).rstrip("\n")
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        lines += "\n  at %s:%d in %s" % (frames[-1].filename, frames[-1].lineno, frames[-1].name)
    return lines

sys.addaudithook(audit)
sys.meta_path.append(ImportMisses)
result = {}
try:
    module, _, name = request["writer"].partition(":")
    target = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    target(request["scratch"])
    signal.alarm(0)
    if not os.path.isfile(request["scratch"]):
        result["wrote_nothing"] = True
    else:
        with open(request["scratch"], encoding="utf-8", newline="") as f:
            written = f.read()
        try:
            with open(request["header"], encoding="utf-8", newline="") as f:
                committed = f.read()
        except FileNotFoundError:
            committed = None
        result["same"] = committed == written
        if not result["same"]:
            result["missing"] = committed is None
            shown = request["shown"]
            result["diff"] = "".join(difflib.unified_diff(
                (committed or "").splitlines(True), written.splitlines(True),
                shown + " (committed)", shown + " (as " + request["writer"] + " writes it)"))
except BaseException as error:
    signal.alarm(0)
    result["error"] = error_text(error)
for name, loaded in list(sys.modules.items()):
    path = getattr(loaded, "__file__", None)
    if isinstance(path, str) and path.endswith(".py"):
        opened.add(os.path.abspath(path))
header = os.path.abspath(request["header"])
result["files"] = sorted(p for p in opened if p != header and not p.endswith(".pyc") and os.path.isfile(p) and outside(p))
result["absent"] = sorted(p for p in (opened | looked_for) if not os.path.lexists(p) and outside(p))
with open(sys.argv[2], "w") as f:
    json.dump(result, f)
)PY";

}  // namespace ck
