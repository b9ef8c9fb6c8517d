// The Python that runs one struct header's writer (header_check.hpp), as
// `python -c <script> <request.json> <answer.json>` in the writer's source
// root: sys.path and the working folder are those of the regenerate command
// `cd <source root> && python -c 'from m import f; f("pkg/args.cuh")'`.
//
// Request: {"writer", "scratch" (the path to write: a scratch folder and the
// header's own file name, so a guard derived from the name is the header's),
// "header" (absolute), "shown"}. Answer: {"same", "missing", "diff"}, or how
// it failed: {"no_module"} (the writer's module is not found), {"no_function"}
// (the module has no such callable), {"not_callable": "a list"} (it names
// something else), {"import_error"} (the module raised
// while imported), {"error"} (the writer raised), {"wrote_nothing"},
// {"not_utf8": "committed"|"written", "offset"}, {"wrote_committed": event}
// (the writer tried to change the committed header itself: refused by the
// audit hook before it happened); with "files" (what the
// writer's process read outside the standard library: every file it opened
// and every Python source it imported), "absent" (files it tried to open that
// did not exist, and where each import that failed would have found its
// module) and "untracked" (the first process it started, if any: what that
// process reads is not seen): a passed check holds while the files keep their
// digests and the absent stay absent, and never when "untracked" is set.
//
// The timeout is the parent's (run_process_within): a writer may fork, catch
// signals or leave processes behind, and is stopped all the same.
#pragma once

namespace ck {

inline constexpr const char* struct_header_writer_script = R"PY(
import difflib, hashlib, importlib, importlib.machinery, importlib.util, json, os, sys, sysconfig, traceback
request = json.load(open(sys.argv[1]))
ignored = {os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")}
# In a virtual environment site-packages lies inside platstdlib: installed packages (cunumpy's
# CudaStruct among them) are what a writer reads, so they are tracked.
tracked = {os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("purelib", "platlib")}
ignored.add(os.path.realpath(os.path.dirname(request["scratch"])) + os.sep)
ignored.add(os.path.realpath(os.path.dirname(sys.argv[1])) + os.sep)
opened, looked_for, started = set(), set(), []
read_digests, hashing = {}, []  # each file's digest when it was read: an edit while the writer runs shows
starts = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
          "_posixsubprocess.fork_exec"}

def outside(path):
    real = os.path.realpath(path)
    if any(real.startswith(folder) for folder in tracked):
        return True
    return not any(real.startswith(folder) for folder in ignored)

def note_digest(path):
    """The digest of a file as it is read: of the source, for a module loaded from its cached .pyc."""
    if hashing:
        return  # our own open, below
    hashing.append(path)
    try:
        if path.endswith(".pyc") and "__pycache__" in path:
            path = importlib.util.source_from_cache(path)
        if path not in read_digests and os.path.isfile(path) and outside(path):
            with open(path, "rb") as f:
                read_digests[path] = hashlib.sha256(f.read()).hexdigest()
    except (OSError, ValueError):
        pass
    finally:
        hashing.pop()

committed_header = os.path.realpath(request["header"])
wrote_committed = []
writing_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

def changes_committed(event, args):
    """An open for writing, a rename, link or removal that would change the committed header."""
    if event == "open" and isinstance(args[0], (str, bytes)):
        mode, flags = args[1], args[2] if len(args) > 2 else 0
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & writing_flags)
        return writing and os.path.realpath(os.fsdecode(args[0])) == committed_header
    targets = {"os.rename": 1, "os.replace": 1, "os.link": 1, "os.symlink": 1, "os.remove": 0, "os.truncate": 0,
               "shutil.copyfile": 1, "shutil.move": 1}
    if event in targets and len(args) > targets[event] and isinstance(args[targets[event]], (str, bytes)):
        return os.path.realpath(os.fsdecode(args[targets[event]])) == committed_header
    return False

def audit(event, args):
    if changes_committed(event, args):
        # Refused before it happens: the check must never change the file it checks.
        wrote_committed.append(event)
        raise PermissionError("the check gave the writer the path " + request["scratch"] + ", but it would change "
                              "the committed header " + request["header"] + " (" + event + ")")
    if event == "open" and isinstance(args[0], (str, bytes)):
        path = os.path.abspath(os.fsdecode(args[0]))
        opened.add(path)
        note_digest(path)
    elif event in starts and not started:
        started.append(event + (" " + repr(args[1] if event == "subprocess.Popen" else args[0])[:200] if args else ""))

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

def error_text(error):
    lines = "".join(traceback.format_exception_only(type(error), error)).rstrip("\n")
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        lines += "\n  at %s:%d in %s" % (frames[-1].filename, frames[-1].lineno, frames[-1].name)
    return lines

def first_bad_byte(data):
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError as error:
        return error.start

def compare(written):
    try:
        with open(request["header"], "rb") as f:
            committed = f.read()
    except FileNotFoundError:
        committed = None
    result["same"] = committed == written
    if result["same"]:
        return
    for which, data in (("committed", committed), ("written", written)):
        bad = first_bad_byte(data or b"")
        if bad is not None:
            result.update(not_utf8=which, offset=bad)
            return
    result["missing"] = committed is None
    shown = request["shown"]
    result["diff"] = "".join(difflib.unified_diff(
        (committed or b"").decode("utf-8").splitlines(True), written.decode("utf-8").splitlines(True),
        shown + " (committed)", shown + " (as " + request["writer"] + " writes it)"))

def import_writer():
    module, _, name = request["writer"].partition(":")
    try:
        target = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name and (module == error.name or module.startswith(error.name + ".")):
            result["no_module"] = error.name
            return None
        result["import_error"] = error_text(error)
        return None
    except BaseException as error:
        result["import_error"] = error_text(error)
        return None
    for part in name.split("."):
        if not hasattr(target, part):
            result["no_function"] = part
            return None
        target = getattr(target, part)
    if not callable(target):
        result["not_callable"] = "a " + type(target).__name__
        return None
    return target

def loaded_sources():
    for loaded in list(sys.modules.values()):
        path = getattr(loaded, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            yield os.path.abspath(path)

for path in loaded_sources():  # imported before the hook
    note_digest(path)
sys.addaudithook(audit)
sys.meta_path.append(ImportMisses)
result = {}
start_folder = os.getcwd()
writer = import_writer()
if writer is not None:
    try:
        writer(request["scratch"])
    except BaseException as error:
        result["error"] = error_text(error)
    if wrote_committed:
        result = {"wrote_committed": wrote_committed[0]}
    os.chdir(start_folder)  # a writer may change folder; the paths below are absolute all the same
    if "error" not in result and not wrote_committed:
        if not os.path.isfile(request["scratch"]):
            result["wrote_nothing"] = True
        else:
            with open(request["scratch"], "rb") as f:
                compare(f.read())
opened.update(loaded_sources())
header = os.path.abspath(request["header"])
result["files"] = sorted(p for p in opened if p != header and not p.endswith(".pyc") and os.path.isfile(p) and outside(p))
result["read_digests"] = {p: read_digests[p] for p in result["files"] if p in read_digests}
result["absent"] = sorted(p for p in (opened | looked_for) if not os.path.lexists(p) and outside(p))
if started:
    result["untracked"] = started[0]
with open(sys.argv[2], "w") as f:
    json.dump(result, f)
)PY";

}  // namespace ck
