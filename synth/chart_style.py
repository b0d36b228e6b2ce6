"""The look of a synthetic chart: size, font, palette, theme, grid, legend, axis format, variants.

A style is a small JSON-able dict drawn at random; chart_code.py turns data + style into code.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from synth import fonts
from synth.rng import choice

PALETTES = {
    "tab10": ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"],
    "set2": ["#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3"],
    "dark2": ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"],
    "pastel": ["#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7"],
    "ocean": ["#023e8a", "#0077b6", "#0096c7", "#00b4d8", "#48cae4", "#90e0ef", "#ade8f4", "#caf0f8"],
    "warm": ["#9d0208", "#d00000", "#dc2f02", "#e85d04", "#f48c06", "#faa307", "#ffba08", "#6a040f"],
    "mono": ["#222222", "#555555", "#888888", "#aaaaaa", "#cccccc", "#444444", "#777777", "#999999"],
}
THEMES = {  # figure bg, axes bg, foreground
    "white": ("#ffffff", "#ffffff", "#222222"),
    "paper": ("#fbf8f1", "#fbf8f1", "#333333"),
    "grey": ("#ffffff", "#eaeaf2", "#262626"),
    "dark": ("#1e1e1e", "#262626", "#e8e8e8"),
}
CMAPS = ("viridis", "magma", "Blues", "YlOrRd", "coolwarm", "cividis", "Greens")
LEGEND_LOCS = ("upper left", "upper right", "lower left", "lower right", "outside")
SHORT_UNITS = ("%", "°C", "mm", "TWh", "t", "min")


def make_style(rng: np.random.Generator, data: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    lang = data["language"]
    fam = choice(rng, fonts.families_for(lang))
    theme = choice(rng, tuple(THEMES))
    palette = choice(rng, tuple(PALETTES))
    if theme == "dark" and palette in ("mono", "ocean", "warm", "dark2"):
        palette = "pastel" if palette in ("mono", "ocean") else "set2"  # keep marks visible on dark
    scale = min(width, height) / 448.0
    s: dict[str, Any] = {
        "width": int(width), "height": int(height), "dpi": 100,
        "font": fonts.usable(fam, lang), "font_size": round(2 * float(choice(rng, (8, 9, 10, 11))) * max(scale, 0.6)) / 2,
        "theme": theme, "palette": palette,
        "grid": choice(rng, ("none", "y", "both")), "grid_style": choice(rng, ("-", "--", ":")),
        "spines": choice(rng, ("all", "left_bottom")),
        "legend": choice(rng, LEGEND_LOCS), "legend_frame": bool(rng.random() < 0.5),
        "value_labels": bool(rng.random() < 0.35), "horizontal": bool(rng.random() < 0.25),
        "marker": choice(rng, ("o", "s", "^", "D", "")), "line_width": round(float(rng.uniform(1.2, 2.8)), 1),
        "edge": choice(rng, ("none", "fg")), "alpha": round(float(rng.uniform(0.55, 0.9)), 2),
        "y_format": choice(rng, ("plain", "thousands", "unit")), "title_loc": choice(rng, ("center", "left")),
        "rotate_x": int(choice(rng, (0, 0, 30, 45))), "donut": bool(rng.random() < 0.4),
        "pie_pct": bool(rng.random() < 0.6), "cmap": choice(rng, CMAPS), "annotate": bool(rng.random() < 0.6),
        "colorbar": bool(rng.random() < 0.5), "hatch": bool(rng.random() < 0.15),
    }
    if s["y_format"] == "unit" and (data.get("unit") not in SHORT_UNITS or s["horizontal"]):
        s["y_format"] = "plain"
    return s
