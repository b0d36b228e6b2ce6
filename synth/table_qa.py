"""QA over a table grid: cell lookup, column and row aggregates, comparisons, counts.

Numbers are read with tables_core.parse_number; answers keep the column's decimals (averages and
ratios two decimals). `args` hold the operands so tests recompute answers independently.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from synth.tables_core import numeric_columns, parse_number


def decimals_of(cells: list[str]) -> int:
    d = 0
    for c in cells:
        t = c.strip().removesuffix("%")
        if "." in t:
            d = max(d, len(t.rsplit(".", 1)[1]))
    return d


def _row_names(grid: list[list[str]]) -> list[str] | None:
    names = [r[0] for r in grid[1:]]
    return names if all(names) and len(set(names)) == len(names) else None


def table_qa(grid: list[list[str]], rng: np.random.Generator, homogeneous: bool = False,
             max_qa: int = 8) -> list[dict[str, Any]]:
    head, body = grid[0], grid[1:]
    names = _row_names(grid)
    label = (lambda i: names[i]) if names else (lambda i: f"row {i + 1}")
    out: list[dict[str, Any]] = []

    def qa(question, answer, qtype, /, **args):
        out.append({"question": question, "answer": answer, "type": qtype, "args": args})

    i, j = int(rng.integers(len(body))), int(rng.integers(1, len(head)))
    if body[i][j] and head[j]:
        qa(f"What is the {head[j]} of {label(i)}?" if names else f"What is the value in {label(i)} under {head[j]}?",
           body[i][j], "value_lookup", op="cell", row=i, col=j)
    qa("How many rows does the table have, not counting the header?", str(len(body)), "count", op="count_rows")
    nums = numeric_columns(grid)
    for j in nums[:3]:
        col = [parse_number(r[j]) for r in body]
        dec = decimals_of([r[j] for r in body])
        h = head[j] or f"column {j + 1}"
        qa(f"What is the sum of the {h} column?", f"{sum(col):.{dec}f}", "sum", op="col_sum", col=j)
        qa(f"What is the average of the {h} column? Give two decimals.", f"{sum(col) / len(col):.2f}", "average",
           op="col_mean", col=j)
        for t, fn in (("max", max), ("min", min)):
            hits = [k for k, v in enumerate(col) if v == fn(col)]
            if len(hits) == 1 and names:
                qa(f"Which row has the {'highest' if t == 'max' else 'lowest'} {h}?", names[hits[0]], t,
                   op="col_arg" + t, col=j)
        a, b = (int(x) for x in rng.permutation(len(body))[:2]) if len(body) > 1 else (0, 0)
        if a != b and col[a] != col[b] and names:
            qa(f"Which has the higher {h}: {names[a]} or {names[b]}?", names[a] if col[a] > col[b] else names[b],
               "comparison", op="compare_rows", col=j, a=a, b=b)
            qa(f"What is the difference in {h} between {names[a]} and {names[b]}?", f"{abs(col[a] - col[b]):.{dec}f}",
               "difference", op="diff_rows", col=j, a=a, b=b)
    if homogeneous and len(nums) >= 2:
        i = int(rng.integers(len(body)))
        vals = [parse_number(body[i][j]) for j in nums]
        dec = max(decimals_of([body[i][j] for j in nums]), 0)
        qa(f"What is the total across all columns for {label(i)}?", f"{sum(vals):.{dec}f}", "sum", op="row_sum", row=i)
    order = [int(k) for k in rng.permutation(len(out))]
    picked, seen = [], set()
    for k in order:
        if out[k]["type"] not in seen:
            seen.add(out[k]["type"])
            picked.append(k)
    picked += [k for k in order if k not in picked]
    return [out[k] for k in sorted(picked[:max_qa])]
