"""Word problems over the synthetic tables: totals, means and ranges of a column, optionally
filtered by another column, with the table in the problem as markdown.

The tables are the ones `synth/tables.py` generates (chart data in six languages, or a staff
list). The independent check re-reads the markdown table from the problem text, as a reader
would, and recomputes with exact rationals: it never sees the values the steps used.
"""
from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

from synth.math_lang import t
from synth.math_steps import MathProblem, Step, lit
from synth.rng import choice
from synth.tables import generated_grid
from synth.tables_core import to_markdown

OPS = ("range", "total", "mean")          # difficulty 1, 2, 3


def _num(cell: str) -> Fraction | None:
    s = cell.strip().replace(",", "")
    try:
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        return None


def _column_values(grid: list[list[str]], col: str, where: tuple[str, str] | None) -> list[Fraction]:
    head = grid[0]
    j = head.index(col)
    rows = grid[1:]
    if where:
        k = head.index(where[0])
        rows = [r for r in rows if r[k] == where[1]]
    vals = [_num(r[j]) for r in rows]
    return [v for v in vals if v is not None]


def make_table_problem(rng: np.random.Generator, lang: str) -> MathProblem:
    grid, title, homogeneous = generated_grid(rng, lang)
    head = grid[0]
    numeric = [j for j in range(1, len(head)) if head[j] and all(_num(r[j]) is not None for r in grid[1:])]
    j = choice(rng, numeric)
    col = head[j]
    op = choice(rng, OPS)
    where = None
    if not homogeneous and op != "range" and "Department" in head:
        depts = sorted({r[head.index("Department")] for r in grid[1:]})
        where = ("Department", choice(rng, depts))
    vals = _column_values(grid, col, where)
    nums = " + ".join(lit(v) for v in vals)
    where_txt = t("where", lang, key=where[0], val=where[1]) if where else ""
    if op == "range":
        hi, lo = max(vals), min(vals)
        steps = [Step(t("largest_minus_smallest", lang), f"{lit(hi)} - {lit(lo)}", hi - lo)]
        q = t("q_range", lang, col=col)
    else:
        steps = [Step(t("add_values", lang), nums, sum(vals, Fraction(0)))]
        if op == "mean":
            steps.append(Step(t("divide_count", lang, n=len(vals)), f"s1 / {len(vals)}", sum(vals, Fraction(0)) / len(vals)))
        q = t("q_total" if op == "total" else "q_mean", lang, col=col, where=where_txt)
    problem = f"{t('table_intro', lang, title=title)}\n\n{to_markdown(grid)}\n\n{q}"
    return MathProblem(f"tables.{op}", lang, OPS.index(op) + 1, problem, steps, [steps[-1].value],
                       {"op": op, "col": col, "where": list(where) if where else None})


def parse_markdown_table(text: str) -> list[list[str]]:
    """The first markdown table in `text` as a grid (header first, separator row skipped)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|")]
    lines = [ln for ln in lines if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", ln)]
    return [[c.strip() for c in ln[1:-1].split(" | ")] for ln in lines]


def check_table_problem(p: MathProblem) -> list[Fraction]:
    """Independent answer: the table as printed in the problem, recomputed with builtins."""
    grid = parse_markdown_table(p.problem)
    where = tuple(p.data["where"]) if p.data["where"] else None
    vals = _column_values(grid, p.data["col"], where)
    if not vals:
        raise ValueError("no values in the printed table")
    op = p.data["op"]
    if op == "range":
        return [max(vals) - min(vals)]
    total = sum(vals, Fraction(0))
    return [total if op == "total" else total / len(vals)]
