#!/usr/bin/env python3
"""The folder graph of lib/: which folder includes which, and whether the house rules hold.

    scripts/folder_graph.py [--edges]

lib/meson.build names each folder shipped in the runtime library (`runtime_folders`) or
tool-only (`tool_folders`). The rules (ARCHITECTURE.md): every folder is named in exactly one
list, no shipped folder includes a tool-only one, and no folders include each other in a cycle.
Prints one line per folder with the folders it includes (--edges: also the files that do), then
the counts; exits 1 when a rule is broken, naming it.
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
# Every spelling the compiler accepts: "folder/x.hpp", <folder/x.hpp> (lib/ is on the include
# path) and "../folder/x.hpp" (relative to the including file).
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.MULTILINE)


def included_folder(source, include):
    """The lib/ folder an #include of `source` names, or None (a system or public header)."""
    if include.startswith("."):
        try:
            parts = (source.parent / include).resolve().relative_to(LIB.resolve()).parts
        except ValueError:
            return None
        return parts[0] if len(parts) > 1 else None
    return include.split("/")[0] if "/" in include else None
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".in"}


def folder_list(meson_text, name):
    match = re.search(name + r"\s*=\s*\[([^\]]*)\]", meson_text)
    if not match:
        sys.exit(f"scripts/folder_graph.py: lib/meson.build has no list `{name}`")
    return re.findall(r"'([^']+)'", match.group(1))


def include_graph(folders):
    """edges[a][b] = the files of folder a that include something of folder b."""
    edges = {folder: defaultdict(list) for folder in folders}
    for folder in folders:
        for path in sorted((LIB / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            for include in INCLUDE.findall(path.read_text(errors="replace")):
                target = included_folder(path, include)
                if target in edges and target != folder:
                    edges[folder][target].append(path.name)
    return edges


def cycles(edges):
    """The strongly connected components of more than one folder (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    show_files = "--edges" in sys.argv[1:]
    meson_text = (LIB / "meson.build").read_text()
    shipped = folder_list(meson_text, "runtime_folders")
    tool_only = folder_list(meson_text, "tool_folders")
    on_disk = sorted(p.name for p in LIB.iterdir() if p.is_dir())
    problems = []
    for folder in on_disk:
        if (folder in shipped) + (folder in tool_only) != 1:
            problems.append(f"lib/{folder}/ must be named in exactly one of runtime_folders and tool_folders")
    edges = include_graph(on_disk)
    for folder in on_disk:
        kind = "shipped" if folder in shipped else "tool"
        print(f"{folder:12} {kind:8} -> {' '.join(sorted(edges[folder])) or '-'}")
        if show_files:
            for target, files in sorted(edges[folder].items()):
                print(f"{'':22}{target}: {' '.join(sorted(set(files)))}")
        if folder in shipped:
            for target, files in sorted(edges[folder].items()):
                if target in tool_only:
                    problems.append(f"shipped lib/{folder}/ includes tool-only lib/{target}/ ({', '.join(sorted(set(files)))})")
    found = cycles(edges)
    problems += [f"folder cycle: {' -> '.join(c)}" for c in found]
    print(f"{len(on_disk)} folders ({len(shipped)} shipped, {len(tool_only)} tool-only), "
          f"{sum(len(e) for e in edges.values())} folder edges, {len(found)} cycle(s)")
    for problem in problems:
        print(f"folder_graph: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
