"""Table grids: normalisation (ragged rows, merged and empty cells, size limits) and markdown.

A grid is a list of rows of strings, header row first. Web tables arrive with merged cells
already repeated (crawl's TABLE_REF.rows) or are parsed from HTML by html_tables.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_WS = re.compile(r"\s+")
_NUM = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")


@dataclass
class TableLimits:
    """What a table may be: longer ones are truncated (or dropped), degenerate ones dropped."""
    max_rows: int = 30            # body rows kept; more are truncated (or dropped, see on_too_many_rows)
    max_cols: int = 12
    max_cell_chars: int = 80
    on_too_many_rows: str = "truncate"   # truncate | drop
    drop_over_rows: int = 5000    # beyond this, always dropped (a data dump, not a table)
    min_rows: int = 2             # body rows
    min_cols: int = 2


def clean_cell(v) -> str:
    return _WS.sub(" ", "" if v is None else str(v)).strip()


def normalise_grid(rows, limits: TableLimits | None = None) -> tuple[list[list[str]] | None, str | None, dict]:
    """-> (grid, drop_reason, notes). Pads ragged rows, drops empty rows/columns, truncates cells and rows."""
    lim = limits or TableLimits()
    notes: dict = {}
    grid = [[clean_cell(c) for c in (r or [])] for r in (rows or [])]
    grid = [r for r in grid if any(r)]
    if not grid:
        return None, "empty_table", notes
    width = max(len(r) for r in grid)
    if any(len(r) != width for r in grid):
        notes["padded_rows"] = sum(len(r) != width for r in grid)
    grid = [r + [""] * (width - len(r)) for r in grid]
    keep_cols = [j for j in range(width) if any(r[j] for r in grid)]
    if len(keep_cols) != width:
        notes["dropped_empty_columns"] = width - len(keep_cols)
    grid = [[r[j] for j in keep_cols] for r in grid]
    # a column that repeats its left neighbour everywhere came from a colspan: keep one copy
    dup = [j for j in range(1, len(keep_cols)) if all(r[j] == r[j - 1] for r in grid)]
    if dup:
        notes["merged_columns"] = len(dup)
        grid = [[c for j, c in enumerate(r) if j not in dup] for r in grid]
    body = len(grid) - 1
    if body > lim.drop_over_rows:
        return None, "too_many_rows", {**notes, "rows": body}
    if body > lim.max_rows:
        if lim.on_too_many_rows == "drop":
            return None, "too_many_rows", {**notes, "rows": body}
        notes["truncated_rows"] = body - lim.max_rows
        grid = grid[:lim.max_rows + 1]
    if len(grid[0]) > lim.max_cols:
        notes["truncated_columns"] = len(grid[0]) - lim.max_cols
        grid = [r[:lim.max_cols] for r in grid]
    if len(grid) - 1 < lim.min_rows:
        return None, "too_few_rows", notes
    if len(grid[0]) < lim.min_cols:
        return None, "too_few_columns", notes
    long = sum(len(c) > lim.max_cell_chars for r in grid for c in r)
    if long:
        notes["truncated_cells"] = long
        grid = [[c if len(c) <= lim.max_cell_chars else c[:lim.max_cell_chars - 1] + "…" for c in r] for r in grid]
    if sum(1 for r in grid[1:] for c in r if c) < 2:
        return None, "mostly_empty", notes
    head, seen = [], {}
    for j, c in enumerate(grid[0]):  # QA names columns by header: make headers present and unique
        name = c or f"column {j + 1}"
        seen[name] = seen.get(name, 0) + 1
        head.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    if head != grid[0]:
        notes["renamed_headers"] = sum(a != b for a, b in zip(head, grid[0]))
        grid = [head] + grid[1:]
    return grid, None, notes


def _md_cell(c: str) -> str:
    return c.replace("|", "\\|").replace("\n", " ")


def to_markdown(grid: list[list[str]]) -> str:
    """GitHub-flavoured markdown table, header first."""
    if not grid:
        return ""
    head, body = grid[0], grid[1:]
    lines = ["| " + " | ".join(_md_cell(c) for c in head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def parse_number(s: str) -> float | None:
    """'1,234.5' -> 1234.5, '12%' -> 12.0, '$3.40' -> 3.4, anything else -> None."""
    t = s.strip().replace("\u2212", "-")
    for pre in ("$", "€", "£", "¥"):
        t = t.removeprefix(pre)
    t = t.removesuffix("%").strip()
    if not _NUM.match(t):
        return None
    return float(t.replace(",", ""))


def numeric_columns(grid: list[list[str]]) -> list[int]:
    """Columns (besides the first) whose every non-header cell parses as a number."""
    return [j for j in range(1, len(grid[0]))
            if len(grid) > 1 and all(parse_number(r[j]) is not None for r in grid[1:])]
