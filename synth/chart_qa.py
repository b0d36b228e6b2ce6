"""Question-answer pairs computed from a chart's data, each with its type and its operands.

Answers are exact strings: values with the chart's decimals, averages and ratios with two
decimals, names as shown on the chart. `args` record the operation and operands so a checker
can recompute every answer from the data without this module.
"""
from __future__ import annotations

from typing import Any

import numpy as np

QA_TYPES = ("value_lookup", "max", "min", "comparison", "trend", "sum", "average", "count", "difference", "ratio")


def fmt(v: float, decimals: int) -> str:
    return f"{v:.{decimals}f}"


def _unique_arg(values: list[float], fn) -> int | None:
    target = fn(values)
    idx = [i for i, v in enumerate(values) if v == target]
    return idx[0] if len(idx) == 1 else None


def _qa(question: str, answer: str, qtype: str, /, **args) -> dict[str, Any]:
    return {"question": question, "answer": answer, "type": qtype, "args": args}


def _category_qa(d: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    cats, series, dec = d["categories"], d["series"], d["decimals"]
    pie = d["chart_type"] == "pie"
    out = []
    n, k = len(cats), len(series)
    for i, s in enumerate(series):
        v = s["values"]
        of = "" if pie or k == 1 else f" for {s['name']}"
        j = int(rng.integers(n))
        out.append(_qa(f"What is the value of {cats[j]}{of}?" if pie else
                       f"What is the value{of or ''} in {cats[j]}?", fmt(v[j], dec), "value_lookup", op="value", series=i, cat=j))
        a = _unique_arg(v, max)
        if a is not None:
            out.append(_qa(f"Which category has the highest value{of}?", cats[a], "max", op="argmax", series=i))
        a = _unique_arg(v, min)
        if a is not None:
            out.append(_qa(f"Which category has the lowest value{of}?", cats[a], "min", op="argmin", series=i))
        j1, j2 = (int(x) for x in rng.permutation(n)[:2])
        if v[j1] != v[j2]:
            out.append(_qa(f"Which is larger{of}: {cats[j1]} or {cats[j2]}?", cats[j1] if v[j1] > v[j2] else cats[j2],
                           "comparison", op="compare_cats", series=i, a=j1, b=j2))
            out.append(_qa(f"What is the difference between {cats[j1]} and {cats[j2]}{of}?",
                           fmt(abs(v[j1] - v[j2]), dec), "difference", op="diff", series=i, a=j1, b=j2))
            if v[j2] != 0:
                out.append(_qa(f"What is the ratio of {cats[j1]} to {cats[j2]}{of}? Give two decimals.",
                               f"{v[j1] / v[j2]:.2f}", "ratio", op="ratio", series=i, a=j1, b=j2))
        if d.get("time_axis") and v[0] != v[-1]:
            out.append(_qa(f"Does the value{of} increase or decrease from {cats[0]} to {cats[-1]}?",
                           "increase" if v[-1] > v[0] else "decrease", "trend", op="trend", series=i))
        out.append(_qa(f"What is the sum of all values{of}?", fmt(sum(v), dec), "sum", op="sum_series", series=i))
        out.append(_qa(f"What is the average value{of}? Give two decimals.", f"{sum(v) / n:.2f}", "average",
                       op="mean_series", series=i))
    if k > 1:
        j = int(rng.integers(n))
        i1, i2 = (int(x) for x in rng.permutation(k)[:2])
        a, b = series[i1]["values"][j], series[i2]["values"][j]
        if a != b:
            out.append(_qa(f"In {cats[j]}, which is larger: {series[i1]['name']} or {series[i2]['name']}?",
                           series[i1]["name"] if a > b else series[i2]["name"], "comparison", op="compare_series",
                           cat=j, a=i1, b=i2))
        if d["chart_type"] in ("stacked_bar", "area"):
            out.append(_qa(f"What is the total of all series in {cats[j]}?",
                           fmt(sum(s["values"][j] for s in series), dec), "sum", op="sum_cat", cat=j))
        out.append(_qa("How many data series are shown?", str(k), "count", op="count_series"))
    out.append(_qa("How many slices does the pie chart have?" if pie else "How many categories are on the axis?",
                   str(n), "count", op="count_cats"))
    return out


def _scatter_qa(d: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    dec, series, out = d["decimals"], d["series"], []
    k = len(series)
    for i, s in enumerate(series):
        of = f" for {s['name']}" if k > 1 else ""
        out.append(_qa(f"How many points are plotted{of}?", str(len(s["x"])), "count", op="count_points", series=i))
        out.append(_qa(f"What is the largest y value{of}?", fmt(max(s["y"]), dec), "max", op="max_y", series=i))
        out.append(_qa(f"What is the smallest y value{of}?", fmt(min(s["y"]), dec), "min", op="min_y", series=i))
        out.append(_qa(f"What is the average x value{of}? Give two decimals.", f"{sum(s['x']) / len(s['x']):.2f}",
                       "average", op="mean_x", series=i))
        out.append(_qa(f"What is the difference between the largest and smallest y value{of}?",
                       fmt(max(s["y"]) - min(s["y"]), dec), "difference", op="range_y", series=i))
    if k > 1:
        i1, i2 = (int(x) for x in rng.permutation(k)[:2])
        m1 = sum(series[i1]["y"]) / len(series[i1]["y"])
        m2 = sum(series[i2]["y"]) / len(series[i2]["y"])
        if m1 != m2:
            out.append(_qa(f"Which group has the higher average y value: {series[i1]['name']} or {series[i2]['name']}?",
                           series[i1]["name"] if m1 > m2 else series[i2]["name"], "comparison", op="compare_mean_y",
                           a=i1, b=i2))
        out.append(_qa("How many groups are shown?", str(k), "count", op="count_series"))
    return out


def bin_counts(values: list[float], edges: list[float]) -> list[int]:
    counts, _ = np.histogram(values, bins=edges)
    return [int(c) for c in counts]


def _hist_qa(d: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    vals, edges, out = d["values"], d["bin_edges"], []
    counts = bin_counts(vals, edges)
    b = int(rng.integers(len(counts)))
    last = b == len(counts) - 1
    out.append(_qa(f"How many values fall in the bin from {edges[b]} to {edges[b + 1]}"
                   f"{' (inclusive)' if last else ' (upper bound excluded)'}?", str(counts[b]), "value_lookup",
                   op="bin_count", bin=b))
    a = _unique_arg(counts, max)
    if a is not None:
        out.append(_qa("Which bin contains the most values?", f"{edges[a]}-{edges[a + 1]}", "max", op="argmax_bin"))
    out.append(_qa("How many values are in the data set?", str(len(vals)), "count", op="count_values"))
    out.append(_qa("What is the mean of the values? Give two decimals.", f"{sum(vals) / len(vals):.2f}", "average",
                   op="mean_values"))
    out.append(_qa("What is the sum of all values?", str(int(sum(vals))), "sum", op="sum_values"))
    out.append(_qa("What is the largest value?", str(int(max(vals))), "max", op="max_value"))
    out.append(_qa("What is the smallest value?", str(int(min(vals))), "min", op="min_value"))
    out.append(_qa("How many bins does the histogram have?", str(len(counts)), "count", op="count_bins"))
    return out


def _heatmap_qa(d: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    rows, cols, m, dec, out = d["row_labels"], d["col_labels"], d["matrix"], d["decimals"], []
    flat = [v for row in m for v in row]
    r, c = int(rng.integers(len(rows))), int(rng.integers(len(cols)))
    out.append(_qa(f"What is the value for {rows[r]} at {cols[c]}?", fmt(m[r][c], dec), "value_lookup", op="cell",
                   row=r, col=c))
    for t, fn, op in (("max", max, "argmax_cell"), ("min", min, "argmin_cell")):
        a = _unique_arg(flat, fn)
        if a is not None:
            word = "highest" if t == "max" else "lowest"
            out.append(_qa(f"Which cell has the {word} value? Answer as row, column.",
                           f"{rows[a // len(cols)]}, {cols[a % len(cols)]}", t, op=op))
    r2, c2 = int(rng.integers(len(rows))), int(rng.integers(len(cols)))
    if m[r][c] != m[r2][c2]:
        out.append(_qa(f"Which is larger: {rows[r]} at {cols[c]} or {rows[r2]} at {cols[c2]}? Answer as row, column.",
                       f"{rows[r]}, {cols[c]}" if m[r][c] > m[r2][c2] else f"{rows[r2]}, {cols[c2]}", "comparison",
                       op="compare_cells", a=[r, c], b=[r2, c2]))
        out.append(_qa(f"What is the difference between {rows[r]} at {cols[c]} and {rows[r2]} at {cols[c2]}?",
                       fmt(abs(m[r][c] - m[r2][c2]), dec), "difference", op="diff_cells", a=[r, c], b=[r2, c2]))
    out.append(_qa(f"What is the sum of the row {rows[r]}?", fmt(sum(m[r]), dec), "sum", op="sum_row", row=r))
    out.append(_qa(f"What is the average of the column {cols[c]}? Give two decimals.",
                   f"{sum(row[c] for row in m) / len(rows):.2f}", "average", op="mean_col", col=c))
    out.append(_qa("How many rows does the heatmap have?", str(len(rows)), "count", op="count_rows"))
    return out


def chart_qa(d: dict[str, Any], rng: np.random.Generator, max_qa: int = 8) -> list[dict[str, Any]]:
    """Up to `max_qa` QA items, covering as many question types as the chart allows."""
    t = d["chart_type"]
    cands = (_scatter_qa(d, rng) if t == "scatter" else _hist_qa(d, rng) if t == "histogram"
             else _heatmap_qa(d, rng) if t == "heatmap" else _category_qa(d, rng))
    order = [int(i) for i in rng.permutation(len(cands))]
    picked, seen = [], set()
    for i in order:  # one of each type first, then the rest
        if cands[i]["type"] not in seen:
            seen.add(cands[i]["type"])
            picked.append(i)
    picked += [i for i in order if i not in picked]
    return [cands[i] for i in sorted(picked[:max_qa])]
