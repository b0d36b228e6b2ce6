"""The strings a synthetic item drew horizontally, from its stored meta: what OCR should read back.

Rotated text (a vertical chart's y label, slanted category labels) is left out: tesseract reads
lines, and a check that always failed on rotation would drop good charts.
"""
from __future__ import annotations

from typing import Any

MAX_STRINGS = 40


def chart_strings(m: dict[str, Any]) -> list[str]:
    d, st = m["data"], m["style"]
    t = d["chart_type"]
    out = [d.get("title", "")]
    horiz = bool(st.get("horizontal")) and t in ("grouped_bar", "stacked_bar")
    if t != "pie":
        out.append(d.get("y_label", "") if horiz else d.get("x_label", ""))
    series = d.get("series") or []
    if t == "pie" or horiz or (t in ("grouped_bar", "stacked_bar") and not st.get("rotate_x")):
        out += [str(c) for c in d.get("categories") or []]
    if t == "heatmap":
        out += [str(c) for c in d.get("row_labels") or []]
    if t != "pie" and isinstance(series, list) and len(series) > 1:
        out += [str(s.get("name", "")) for s in series if isinstance(s, dict)]
    return out


def table_strings(m: dict[str, Any]) -> list[str]:
    cells = [str(c) for row in m.get("table") or [] for c in row]
    return [m.get("title") or ""] + cells


def scene_strings(m: dict[str, Any]) -> list[str]:
    return [it.get("text", "") for it in m.get("scene", {}).get("items", []) if it.get("kind") == "text"]


def drawn_strings(kind: str, meta: dict[str, Any]) -> list[str]:
    """kind: chart | table | scene (the synth kinds' meta["kind"])."""
    f = {"chart": chart_strings, "table": table_strings, "scene": scene_strings}.get(kind)
    got = f(meta) if f else []
    return [s for s in dict.fromkeys(x.strip() for x in got if x) if s][:MAX_STRINGS]
