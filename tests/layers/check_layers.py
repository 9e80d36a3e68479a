#!/usr/bin/env python3
"""The folder structure of src/, checked.

    python3 tests/layers/check_layers.py [--src DIR] [--dot FILE]
    python3 tests/layers/check_layers.py --selftest

The folders of src/ form layers, top to bottom:

    main, net, cmd, session, persist, db, ds, mem, base, util

and a folder may include only itself and the folders below it. A file's
folder is the first path component under src/ (src/cmd/types/t_hash.c is in
"cmd"); src/main.c is the folder "main". An `#include "..."` is resolved as
the compiler does: first beside the including file, then under src/ (the
-Isrc of the Makefile); a bare name found in neither place is taken to be in
the including file's own folder, and a path whose first component is no
folder of src/ is outside the tree and not counted.

Checks, each printed as one PASS or FAIL line, with the offending file:line
lines indented below a FAIL:

  folder cycles      no cycle in the folder-level include graph
  upward includes    no include of a folder above the includer (or of a
                     folder missing from the order)
  weak symbols       no __attribute__((weak)) and no #pragma weak
  block-scope extern no `extern` declaration inside a function body
  file length        no file of src/ over 1,500 lines

Comments and the contents of string and character literals are ignored.
The last line is "N passed, M failed" (N + M = 5 checks); exit status 1
when a check failed. --dot FILE also writes the folder graph for Graphviz
(edge labels count the include lines; upward edges in red).

--selftest runs the checks on the two fixture trees of tests/layers/fixtures/
(with a 20-line limit instead of 1,500): bad/src must fail each check at
exactly the lines listed in SELFTEST_BAD below, good/src must pass them all.
Standard library only.
"""

import argparse
import os
import re
import sys

ORDER = ["main", "net", "cmd", "session", "persist", "db", "ds", "mem", "base", "util"]
MAX_LINES = 1500
SOURCE_EXT = (".c", ".h", ".inc")
CHECKS = ["folder cycles", "upward includes", "weak symbols", "block-scope extern", "file length"]

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


# ------------------------------------------------------------- reading --

def strip_c(text):
    """The text with comments and the contents of string and character
    literals replaced by spaces (newlines kept, so line numbers hold; the
    quotes themselves stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + text[j])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank_directives(code):
    """The stripped text with preprocessor lines (and their continuation
    lines) replaced by spaces."""
    lines = code.split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[k] = " " * len(line)
    return "\n".join(lines)


class Source:
    def __init__(self, src, rel):
        self.rel = rel                      # path under src/
        self.path = os.path.join(src, rel)
        with open(self.path, encoding="utf-8", errors="replace") as f:
            self.text = f.read()
        self.lines = self.text.splitlines()
        self.code = strip_c(self.text)
        parts = rel.split("/")
        self.folder = parts[0] if len(parts) > 1 else os.path.splitext(parts[0])[0]


def read_tree(src):
    files = []
    for root, dirs, names in os.walk(src):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(SOURCE_EXT):
                rel = os.path.relpath(os.path.join(root, name), src).replace(os.sep, "/")
                files.append(Source(src, rel))
    return files


# ------------------------------------------------------- include graph --

INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')


def includes(src, f, folders):
    """(line, target folder, written path) for each #include "..." of f."""
    out = []
    code_lines = f.code.split("\n")
    for k, line in enumerate(f.lines):
        # The directive must survive comment stripping; the path is read from
        # the original line (stripping blanks the inside of the quotes).
        if k >= len(code_lines) or not re.match(r'\s*#\s*include\s*"', code_lines[k]):
            continue
        m = INCLUDE.match(line)
        if not m:
            continue
        written = m.group(1)
        target = None
        for base in (os.path.dirname(f.path), src):
            cand = os.path.normpath(os.path.join(base, written))
            if os.path.isfile(cand):
                rel = os.path.relpath(cand, src).replace(os.sep, "/")
                if not rel.startswith("../"):
                    parts = rel.split("/")
                    target = parts[0] if len(parts) > 1 else os.path.splitext(parts[0])[0]
                break
        else:
            first = written.split("/")[0]
            if "/" not in written:
                target = f.folder
            elif first in folders:
                target = first
        if target is not None:
            out.append((k + 1, target, written))
    return out


def strongly_connected(nodes, edges):
    """Tarjan's algorithm: the components of the graph, as lists."""
    index, low, on, stack, comps = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def rank_key(folder):
    return (ORDER.index(folder) if folder in ORDER else len(ORDER), folder)


def cycle_through(comp, edges):
    """One cycle visiting every folder of a strongly connected component is
    not always possible; this is the shortest cycle through its top folder."""
    members = set(comp)
    start = min(comp, key=rank_key)
    prev, queue = {start: None}, [start]
    for v in queue:
        for w in sorted(edges.get(v, ()), key=rank_key):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start, start]


# --------------------------------------------------------------- checks --

def block_scope_externs(code):
    """Lines of `extern` declarations inside a function body. A function
    body is a brace block opened at file scope right after a ')' (the end
    of a declarator or of its __attribute__); other file-scope braces are
    struct/union/enum bodies and initializers."""
    code = blank_directives(code)
    found = []
    depth, in_func, last, line = 0, False, "", 1
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c.isspace():
            i += 1
            continue
        if c == "_" or c.isalpha():
            j = i
            while j < n and (code[j] == "_" or code[j].isalnum()):
                j += 1
            if in_func and code[i:j] == "extern":
                found.append(line)
            last = "w"
            i = j
            continue
        if c == "{":
            depth += 1
            if depth == 1 and last == ")":
                in_func = True
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                in_func = False
        last = c
        i += 1
    return found


WEAK_ATTR = re.compile(r"__attribute__\s*\(\(")
WEAK_WORD = re.compile(r"\b_*weak_*\b")
WEAK_PRAGMA = re.compile(r"(?m)^\s*#\s*pragma\s+weak\b")


def weak_lines(code):
    found = set()
    for m in WEAK_ATTR.finditer(code):
        depth, j = 2, m.end()
        while j < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            j += 1
        if WEAK_WORD.search(code[m.end():j]):
            found.add(code.count("\n", 0, m.start()) + 1)
    for m in WEAK_PRAGMA.finditer(code):
        found.add(code.count("\n", 0, m.start()) + 1)
    return sorted(found)


def check(src, max_lines=MAX_LINES):
    """Runs every check on the tree src. Returns (results, graph) where
    results maps each check name to a list of (file:line, message) findings
    (empty = PASS) and graph maps (from, to) folder edges to include counts."""
    files = read_tree(src)
    folders = {f.folder for f in files}
    res = {name: [] for name in CHECKS}
    graph, sites = {}, {}
    for f in files:
        for line, target, written in includes(src, f, folders):
            graph[(f.folder, target)] = graph.get((f.folder, target), 0) + 1
            if target == f.folder:
                continue
            where = "src/%s:%d" % (f.rel, line)
            sites.setdefault((f.folder, target), []).append((where, written))
            if f.folder not in ORDER or target not in ORDER:
                missing = f.folder if f.folder not in ORDER else target
                res["upward includes"].append(
                    (where, '#include "%s": folder %s is not in the layer order' % (written, missing)))
            elif ORDER.index(target) < ORDER.index(f.folder):
                res["upward includes"].append(
                    (where, '#include "%s": %s includes %s, which is above it' % (written, f.folder, target)))
        for line in weak_lines(f.code):
            res["weak symbols"].append(("src/%s:%d" % (f.rel, line), f.lines[line - 1].strip()))
        for line in block_scope_externs(f.code):
            res["block-scope extern"].append(("src/%s:%d" % (f.rel, line), f.lines[line - 1].strip()))
        if len(f.lines) > max_lines:
            res["file length"].append(("src/%s:%d" % (f.rel, max_lines + 1),
                                       "%d lines (at most %d)" % (len(f.lines), max_lines)))

    edges = {}
    for (a, b) in sites:
        edges.setdefault(a, set()).add(b)
    for comp in strongly_connected(folders, edges):
        if len(comp) < 2:
            continue
        cycle = cycle_through(comp, edges)
        members = set(comp)
        res["folder cycles"].append(("", "cycle: " + " -> ".join(cycle)))
        for (a, b) in sorted(sites, key=lambda e: (rank_key(e[0]), rank_key(e[1]))):
            if a in members and b in members:
                for where, written in sites[(a, b)]:
                    res["folder cycles"].append((where, '%s -> %s (#include "%s")' % (a, b, written)))
    return res, graph


def write_dot(graph, path):
    nodes = sorted({a for a, _ in graph} | {b for _, b in graph}, key=rank_key)
    with open(path, "w") as f:
        f.write("// The folder-level include graph of src/ (tests/layers/check_layers.py).\n")
        f.write("digraph layers {\n    rankdir=TB;\n    node [shape=box];\n")
        for v in nodes:
            f.write('    "%s";\n' % v)
        for (a, b), n in sorted(graph.items(), key=lambda e: (rank_key(e[0][0]), rank_key(e[0][1]))):
            if a == b:
                continue
            up = a not in ORDER or b not in ORDER or ORDER.index(b) < ORDER.index(a)
            f.write('    "%s" -> "%s" [label=%d%s];\n' % (a, b, n, ', color=red, fontcolor=red' if up else ""))
        f.write("}\n")


def report(res, max_lines=MAX_LINES):
    passed = failed = 0
    for name in CHECKS:
        title = name if name != "file length" else "file length (at most %d lines)" % max_lines
        found = res[name]
        if not found:
            print("PASS: %s" % title)
            passed += 1
            continue
        # A cycle is one finding (a line without file:line) and its includes.
        n = sum(1 for where, _ in found if not where) or len(found)
        print("FAIL: %s: %d" % (title, n))
        for where, msg in found:
            print("    %s%s" % (where + ": " if where else "", msg))
        failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return failed == 0


# ------------------------------------------------------------ self-test --

# What check() must find in fixtures/bad/src (with max_lines=20), exactly.
SELFTEST_BAD = {
    "folder cycles": ["src/cmd/cmd.h:3", "src/session/session.h:3"],
    "upward includes": ["src/session/session.h:3", "src/util/u.c:2", "src/extra/extra.c:2"],
    "weak symbols": ["src/db/db.c:4", "src/db/db.c:5", "src/db/db.c:6"],
    "block-scope extern": ["src/ds/ds.c:12", "src/ds/ds.c:14"],
    "file length": ["src/util/big.c:21"],
}


def selftest():
    passed = failed = 0

    def expect(cond, what):
        nonlocal passed, failed
        if cond:
            passed += 1
            if "-v" in sys.argv:
                print("PASS: " + what)
        else:
            failed += 1
            print("FAIL: " + what)

    fixtures = os.path.join(HERE, "fixtures")
    bad, graph = check(os.path.join(fixtures, "bad", "src"), max_lines=20)
    for name in CHECKS:
        got = sorted(where for where, _ in bad[name] if where)
        want = sorted(SELFTEST_BAD[name])
        expect(got == want, "bad tree, %s: found %s, expected %s" % (name, got, want))
    cycles = [msg for where, msg in bad["folder cycles"] if not where]
    expect(cycles == ["cycle: cmd -> session -> cmd"], "bad tree: the cycle is named (%s)" % cycles)
    expect(graph.get(("cmd", "cmd")) == 1, "bad tree: a bare include in cmd/types/ stays in cmd")
    expect(graph.get(("cmd", "db")) == 1, "bad tree: cmd/types/ -> db counts as cmd -> db")
    expect(("main", "net") in graph, "bad tree: src/main.c is the folder main")

    good, graph = check(os.path.join(fixtures, "good", "src"), max_lines=20)
    for name in CHECKS:
        expect(not good[name], "good tree, %s: nothing found (%s)" % (name, good[name]))
    expect(len(graph) >= 5, "good tree: the graph has its edges (%s)" % sorted(graph))

    out = os.path.join(REPO, "tests", "tmp", "layers-selftest.dot")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    bad, graph = check(os.path.join(fixtures, "bad", "src"), max_lines=20)
    write_dot(graph, out)
    with open(out) as f:
        dot = f.read()
    expect('"session" -> "cmd" [label=1, color=red' in dot and dot.rstrip().endswith("}"),
           "--dot writes the graph, upward edges in red")
    print("%d passed, %d failed" % (passed, failed))
    return failed == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(REPO, "src"), help="the tree to check (default: src/)")
    ap.add_argument("--dot", help="write the folder graph as Graphviz dot to this file")
    ap.add_argument("--selftest", action="store_true", help="check the checker on tests/layers/fixtures/")
    ap.add_argument("-v", action="store_true", help="--selftest: print the passing expectations too")
    a = ap.parse_args()
    if a.selftest:
        return 0 if selftest() else 1
    res, graph = check(a.src)
    if a.dot:
        write_dot(graph, a.dot)
    return 0 if report(res) else 1


if __name__ == "__main__":
    sys.exit(main())
