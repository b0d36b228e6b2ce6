"""The data behind a synthetic chart: topic, labels in one language, values with trends and noise.

`make_chart_data(rng, chart_type, lang)` returns a JSON-able dict (the chart's data table and its
labels); the chart's image, code and QA are all derived from this dict and nothing else.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from synth import lexicon as L
from synth.rng import choice, sample

CHART_TYPES = ("grouped_bar", "stacked_bar", "line", "scatter", "pie", "histogram", "area", "heatmap")
TIME_AXES = ("month", "year", "quarter")
CAPS = {"scores": 100.0}  # hard upper bounds of a topic's values

# topic -> (chart types, x axis kind, series kind, unit, decimals)
TOPICS: dict[str, tuple[tuple[str, ...], str, str, str, int]] = {
    "temperature": (("line", "grouped_bar", "heatmap"), "month", "city", "°C", 1),
    "rainfall": (("grouped_bar", "stacked_bar", "line", "area", "heatmap"), "month", "city", "mm", 0),
    "sales": (("grouped_bar", "stacked_bar", "line", "area"), "quarter", "product", "k units", 0),
    "revenue": (("line", "grouped_bar", "area", "stacked_bar"), "year", "region", "M EUR", 1),
    "population": (("line", "grouped_bar"), "year", "country", "M people", 1),
    "energy": (("stacked_bar", "area", "line", "grouped_bar", "pie"), "year", "energy", "TWh", 0),
    "visitors": (("line", "grouped_bar", "stacked_bar"), "day", "brand", "k visits", 1),
    "scores": (("grouped_bar", "heatmap"), "subject", "class", "points", 1),
    "market_share": (("pie",), "brand", "", "%", 1),
    "harvest": (("pie", "grouped_bar", "stacked_bar"), "fruit", "region", "t", 0),
    "commute": (("histogram",), "", "", "min", 0),
    "height_weight": (("scatter",), "", "", "", 0),
    "ads_sales": (("scatter",), "", "", "", 1),
    "traffic": (("heatmap",), "day", "hour", "cars/h", 0),
}
# topic -> (low, high) of a typical value; trend kind
RANGES = {"temperature": (-4.0, 28.0), "rainfall": (10.0, 180.0), "sales": (20.0, 480.0),
          "revenue": (40.0, 900.0), "population": (5.0, 140.0), "energy": (5.0, 260.0), "visitors": (2.0, 90.0),
          "scores": (45.0, 96.0), "harvest": (80.0, 2400.0), "traffic": (40.0, 1800.0)}


def topics_for(chart_type: str) -> list[str]:
    return [t for t, spec in TOPICS.items() if chart_type in spec[0]]


def _categories(rng: np.random.Generator, kind: str, lang: str, lo: int, hi: int) -> list[str]:
    n = int(rng.integers(lo, hi + 1))
    if kind == "month":
        n = min(n, 12)
        start = int(rng.integers(0, 12 - n + 1))
        return L.MONTHS[lang][start:start + n]
    if kind == "year":
        start = int(rng.integers(2000, 2021))
        return [str(start + i) for i in range(n)]
    if kind == "quarter":
        return list(L.QUARTERS[lang])
    if kind == "day":
        return L.WEEKDAYS[lang][:max(5, min(n, 7))] if n >= 5 else L.WEEKDAYS[lang][:5]
    pool = {"subject": L.SUBJECTS[lang], "fruit": L.FRUITS[lang], "brand": L.BRANDS, "region": L.REGIONS[lang],
            "city": L.CITIES[lang], "country": L.COUNTRIES[lang], "product": L.product_names(lang),
            "class": L.class_names(lang), "energy": L.ENERGY[lang]}[kind]
    return sample(rng, pool, min(n, len(pool)))


def _round(values, decimals: int) -> list[float]:
    out = [round(float(v), decimals) for v in values]
    return [float(int(v)) if decimals == 0 else v for v in out]


def _series_values(rng: np.random.Generator, topic: str, n: int, k: int, time_axis: bool, decimals: int,
                   positive: bool) -> list[list[float]]:
    lo, hi = RANGES[topic]
    out = []
    x = np.arange(n, dtype=float)
    for _ in range(k):
        base = rng.uniform(lo + 0.15 * (hi - lo), hi - 0.25 * (hi - lo))
        if topic == "temperature":
            amp = rng.uniform(3.0, 10.0)
            phase = rng.uniform(-0.5, 0.5)
            vals = base - 8 + amp * np.sin((x + phase) / max(n - 1, 1) * math.pi)
        elif time_axis:
            slope = rng.uniform(-0.06, 0.12) * base
            vals = base + slope * x
        else:
            vals = np.full(n, base) * rng.uniform(0.5, 1.4, n)
        vals = vals + rng.normal(0, 0.06 * (hi - lo), n)
        floor = lo - 0.3 * abs(lo) if not positive else max(0.5 * lo, 0.5)
        vals = np.clip(vals, floor, CAPS.get(topic, hi * 1.4))
        out.append(_round(vals, decimals))
    return out


def make_chart_data(rng: np.random.Generator, chart_type: str, lang: str) -> dict[str, Any]:
    """Data fields and values for one chart of `chart_type` with labels in `lang`."""
    if chart_type not in CHART_TYPES:
        raise ValueError(f"unknown chart type {chart_type!r}")
    topic = choice(rng, topics_for(chart_type))
    _, x_kind, s_kind, unit, decimals = TOPICS[topic]
    d: dict[str, Any] = {"chart_type": chart_type, "topic": topic, "language": lang, "unit": unit,
                         "unit_label": L.UNITS[unit][lang] if unit else "", "decimals": decimals,
                         "title": L.TOPIC_TEXT[topic][lang]}
    if chart_type == "histogram":
        n = int(rng.integers(40, 240))
        vals = np.clip(rng.lognormal(math.log(rng.uniform(18, 35)), rng.uniform(0.3, 0.55), n), 1, 150)
        values = [int(round(v)) for v in vals]
        width = int(choice(rng, [5, 10, 15]))
        top = (max(values) // width + 1) * width
        d.update(values=values, bin_edges=list(range(0, top + 1, width)),
                 x_label=L.axis_label(L.TOPIC_TEXT[topic][lang], unit, lang), y_label=L.AXIS["count"][lang])
        return d
    if chart_type == "scatter":
        groups = sample(rng, ["adults", "teens"], int(rng.integers(1, 3))) if topic == "height_weight" \
            else sample(rng, list(range(4)), int(rng.integers(1, 4)))
        series = []
        for g in groups:
            m = int(rng.integers(8, 40))
            if topic == "height_weight":
                h = rng.normal(172 if g == "adults" else 160, 8, m)
                w = 0.9 * (h - 100) + rng.normal(0, 6, m) - (0 if g == "adults" else 8)
                name = L.GROUPS[g][lang]
            else:
                h = rng.uniform(5, 60, m)
                w = rng.uniform(20, 60) + h * rng.uniform(1.5, 4.0) + rng.normal(0, 12, m)
                name = L.REGIONS[lang][g]
            series.append({"name": name, "x": _round(h, decimals), "y": _round(np.abs(w), decimals)})
        xq, yq, xu, yu = ("height", "weight", "cm", "kg") if topic == "height_weight" else ("ads", "sales", "k EUR", "k EUR")
        d.update(series=series, x_label=L.axis_label(L.QUANTITY[xq][lang], xu, lang),
                 y_label=L.axis_label(L.QUANTITY[yq][lang], yu, lang))
        return d
    if chart_type == "heatmap":
        if topic == "traffic":
            rows = L.WEEKDAYS[lang][:int(rng.integers(5, 8))]
            start = int(rng.integers(6, 10))
            cols = [f"{h}:00" for h in range(start, start + 2 * int(rng.integers(4, 7)), 2)]
            x_word, y_word = L.QUANTITY["hour"][lang], L.AXIS["day"][lang]
        else:
            rows = _categories(rng, s_kind, lang, 3, 5)
            cols = _categories(rng, x_kind, lang, 4, 6)
            x_word, y_word = L.AXIS.get(x_kind, L.AXIS["month"])[lang], ""
        vals = _series_values(rng, "traffic" if topic == "traffic" else topic, len(cols), len(rows),
                              x_kind in TIME_AXES, decimals, positive=topic != "temperature")
        d.update(row_labels=list(rows), col_labels=list(cols), matrix=vals, x_label=x_word, y_label=y_word)
        return d
    if chart_type == "pie":
        cats = _categories(rng, x_kind if topic != "energy" else "energy", lang, 3, 6)
        raw = rng.dirichlet(np.full(len(cats), 2.0))
        if topic == "market_share":
            vals = _round(raw * 100, 1)
            vals[-1] = round(100.0 - sum(vals[:-1]), 1)
            if vals[-1] <= 0:  # rounding pushed the last share out: rebalance on the largest
                big = int(np.argmax(vals[:-1]))
                vals[big] = round(vals[big] + vals[-1] - 0.5, 1)
                vals[-1] = 0.5
        else:
            lo, hi = RANGES[topic]
            vals = _round(np.maximum(raw * len(cats) * (lo + hi) / 2, 1), decimals)
        d.update(categories=list(cats), series=[{"name": d["title"], "values": vals}], x_label="", y_label="")
        return d
    time_axis = x_kind in TIME_AXES
    cats = _categories(rng, x_kind, lang, 4, 9 if x_kind == "year" else 8)
    k = 1 if rng.random() < 0.25 else int(rng.integers(2, 4 if chart_type in ("grouped_bar", "line") else 5))
    names = _categories(rng, s_kind, lang, k, k)
    positive = chart_type in ("stacked_bar", "area") or topic != "temperature"
    vals = _series_values(rng, topic, len(cats), len(names), time_axis, decimals, positive)
    d.update(categories=list(cats), series=[{"name": nm, "values": v} for nm, v in zip(names, vals)],
             x_label=L.AXIS[x_kind][lang] if x_kind in L.AXIS else "",
             y_label=L.axis_label(L.TOPIC_TEXT[topic][lang], unit, lang), time_axis=time_axis)
    return d


def data_table(d: dict[str, Any]) -> list[list[str]]:
    """The chart's data as a grid of strings, header first (what a reader would tabulate)."""
    t = d["chart_type"]
    fmt = (lambda v: f"{v:.{d['decimals']}f}")
    if t == "histogram":
        return [["value"]] + [[str(v)] for v in d["values"]]
    if t == "scatter":
        rows = [["series", "x", "y"]]
        for s in d["series"]:
            rows += [[s["name"], fmt(x), fmt(y)] for x, y in zip(s["x"], s["y"])]
        return rows
    if t == "heatmap":
        return [[""] + d["col_labels"]] + [[r] + [fmt(v) for v in row] for r, row in zip(d["row_labels"], d["matrix"])]
    return [[""] + [s["name"] for s in d["series"]]] + [
        [c] + [fmt(s["values"][i]) for s in d["series"]] for i, c in enumerate(d["categories"])]
