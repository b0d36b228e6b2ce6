"""The package floors hold (docs/ARCHITECTURE.md): imports point down, no module cycles, and no
library reaches up into pipelines/ (the CLI), not even by running it as a subprocess.

The scan reads every module's AST, so imports inside functions count as much as those at the top.
"""
from __future__ import annotations

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("corpus", "crawl", "filters", "imagetext", "synth", "training", "inference", "datatools", "pipelines")
# package -> the packages it may import (besides itself)
ALLOWED = {
    "corpus": set(),
    "crawl": {"corpus"},
    "filters": {"corpus", "crawl", "training"},  # CLIP scoring applies a model training/clip defines
    "imagetext": {"corpus", "crawl", "filters"},  # the images stage's rows: fetched images, filter verdicts
    "synth": {"corpus", "filters"},
    "training": {"corpus"},
    "inference": {"corpus", "training", "filters"},
    "datatools": {"corpus", "filters"},  # builders of training data for the shipped filter models
    "pipelines": {"corpus", "crawl", "filters", "imagetext", "synth", "training", "inference"},
}
# a library running the CLI: `python -m pipelines.cli ...` or the `cidermill` console script
_CLI_CALL = re.compile(r"""["'](pipelines\.cli|pipelines\.commands[\w.]*|cidermill)["']""")


def _modules() -> dict[str, str]:
    out = {}
    for pkg in PACKAGES:
        base = os.path.join(ROOT, pkg)
        for dirpath, dirnames, files in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "build") and not d.startswith(".")]
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    mod = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    out[mod.removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _imports(path: str, mod: str) -> set[str]:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                parts = mod.split(".")
                is_pkg = path.endswith("__init__.py")
                base = parts[: len(parts) - node.level + (1 if is_pkg else 0)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{a.name}" for a in node.names)
    return {n for n in found if n.split(".")[0] in PACKAGES}


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


GRAPH = {mod: {r for n in _imports(path, mod) if (r := _resolve(n)) and r != mod}
         for mod, path in MODULES.items()}


def test_scan_sees_the_packages():
    assert {m.split(".")[0] for m in MODULES} >= {"corpus", "crawl", "filters", "imagetext", "synth", "training",
                                                  "datatools", "pipelines"}
    assert "corpus" in {d.split(".")[0] for d in GRAPH["pipelines.cli"] | GRAPH["pipelines.shards_io"]}


@pytest.mark.parametrize("pkg", PACKAGES)
def test_imports_point_down(pkg):
    bad = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() if m.split(".")[0] == pkg
                 for d in deps if d.split(".")[0] not in ALLOWED[pkg] | {pkg})
    assert not bad, "imports against the floors (docs/ARCHITECTURE.md):\n" + "\n".join(bad)


def test_no_library_runs_the_cli():
    bad = []
    for mod, path in MODULES.items():
        if mod.split(".")[0] == "pipelines":
            continue
        for i, line in enumerate(open(path, encoding="utf-8"), 1):
            if _CLI_CALL.search(line) and "subprocess" in open(path, encoding="utf-8").read():
                bad.append(f"{path}:{i}: {line.strip()}")
    assert not bad, "a library runs the CLI (an upward dependency no import shows):\n" + "\n".join(bad)


def test_no_module_cycles():
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):  # Tarjan's strongly connected components, iteratively deep enough for this tree
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"
