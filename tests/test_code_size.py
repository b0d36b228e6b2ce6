"""Code a reader can follow: no function over 80 lines, no pipelines/ module over 500 lines.

A long function is a list of steps without names; a long pipeline module is several stages in one
file. Both are read from the AST of every module in the packages (tests/ and bench/ scripts are
not scanned). Data tables (the demo site's fixture pages) are exempt by name below; so, for now,
are the files other branches are splitting: the lead empties IN_PROGRESS after merging them.
"""
from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("corpus", "crawl", "filters", "synth", "training", "inference", "pipelines", "imagetext", "datatools")
MAX_FUNCTION_LINES = 80
MAX_PIPELINE_MODULE_LINES = 500

# functions that are data: page after page of fixture text, one literal per page
DATA_TABLES = {
    "pipelines/demo_site/build/media.py": {"gallery_pages"},
    "pipelines/demo_site/build/text_cases.py": {"pii_pages", "quality_pages"},
}
# files being split on other branches right now (path -> functions still over the limit; "*": the
# file's length too)
IN_PROGRESS: dict[str, set[str]] = {}


def _sources():
    for pkg in PACKAGES:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in `source` longer than `limit` lines."""
    return [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > limit]


def test_the_scan_finds_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [("f", MAX_FUNCTION_LINES + 1)]
    assert long_functions(f"def f():\n{body}\n", limit=MAX_FUNCTION_LINES + 1) == []
    method = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"class C:\n    async def m(self):\n{method}\n") == [("m", MAX_FUNCTION_LINES + 1)]


def test_no_function_over_80_lines():
    bad = []
    for rel, path in _sources():
        with open(path, encoding="utf-8") as f:
            found = long_functions(f.read())
        exempt = DATA_TABLES.get(rel, set()) | IN_PROGRESS.get(rel, set())
        bad += [f"{rel}: {name} ({n} lines)" for name, n in found if name not in exempt]
    assert not bad, "functions over 80 lines (split them into named steps):\n" + "\n".join(bad)


def test_no_pipelines_module_over_500_lines():
    bad = []
    for rel, path in _sources():
        if rel.startswith("pipelines/") and "*" not in IN_PROGRESS.get(rel, set()):
            with open(path, encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_PIPELINE_MODULE_LINES:
                bad.append(f"{rel} ({n} lines)")
    assert not bad, "pipelines/ modules over 500 lines (one stage per module):\n" + "\n".join(bad)


def test_exemptions_name_real_functions():
    """An exemption for a function that is gone or short again must be removed."""
    stale = []
    for table in (DATA_TABLES, IN_PROGRESS):
        for rel, names in table.items():
            path = os.path.join(ROOT, rel)
            if not os.path.exists(path):
                stale.append(f"{rel}: file gone")
                continue
            with open(path, encoding="utf-8") as f:
                found = {name for name, _ in long_functions(f.read())}
            stale += [f"{rel}: {name} is not over the limit" for name in names - {"*"} - found]
    assert not stale, "stale exemptions in tests/test_code_size.py:\n" + "\n".join(stale)
