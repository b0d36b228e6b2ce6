"""Drawing primitives of synthetic scenes: shapes, composite objects, text and small charts.

Every drawer takes (draw, box, paint) where `paint(name)` maps a part's colour name to the fill
used: real colours for the image, 255 for the object's mask. Drawing the same geometry twice is
how a scene measures each object's drawn extent (its box) exactly.
PIL draws shapes without anti-aliasing, so a shape's pixels carry exactly its named colour.
"""
from __future__ import annotations

import math
from typing import Callable

from PIL import ImageDraw

Paint = Callable[[str], object]

# Saturated, well-separated colours with plain names (backgrounds never use these exact values).
COLORS: dict[str, tuple[int, int, int]] = {
    "red": (214, 39, 40), "orange": (255, 127, 14), "yellow": (240, 200, 0), "green": (44, 160, 44),
    "blue": (31, 90, 200), "purple": (128, 60, 170), "pink": (230, 90, 170), "brown": (140, 86, 55),
    "black": (20, 20, 20), "white": (255, 255, 255), "grey": (128, 128, 128), "cyan": (0, 170, 190),
}
SHAPES = ("circle", "oval", "square", "rectangle", "triangle", "diamond", "pentagon", "hexagon", "star", "cross",
          "ring")
OBJECTS = ("tree", "house", "sun", "flower", "car", "balloon")


def _poly(cx: float, cy: float, r: float, n: int, rot: float = -math.pi / 2) -> list[tuple[float, float]]:
    return [(cx + r * math.cos(rot + 2 * math.pi * i / n), cy + r * math.sin(rot + 2 * math.pi * i / n)) for i in range(n)]


def _star(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    pts = []
    for i in range(10):
        rr = r if i % 2 == 0 else r * 0.45
        a = -math.pi / 2 + math.pi * i / 5
        pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
    return pts


def draw_shape(d: ImageDraw.ImageDraw, shape: str, box: tuple[int, int, int, int], color: str, paint: Paint) -> None:
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, min(w, h) / 2
    f = paint(color)
    if shape == "circle":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=f)
    elif shape == "oval":
        d.ellipse([x0, y0 + h * 0.2, x1, y1 - h * 0.2], fill=f)
    elif shape == "square":
        d.rectangle([cx - r, cy - r, cx + r, cy + r], fill=f)
    elif shape == "rectangle":
        d.rectangle([x0, y0 + h * 0.25, x1, y1 - h * 0.25], fill=f)
    elif shape == "triangle":
        d.polygon([(cx, y0), (x1, y1), (x0, y1)], fill=f)
    elif shape == "diamond":
        d.polygon([(cx, y0), (x1, cy), (cx, y1), (x0, cy)], fill=f)
    elif shape in ("pentagon", "hexagon"):
        d.polygon(_poly(cx, cy, r, 5 if shape == "pentagon" else 6), fill=f)
    elif shape == "star":
        d.polygon(_star(cx, cy, r), fill=f)
    elif shape == "cross":
        t = r * 0.35
        d.rectangle([cx - t, cy - r, cx + t, cy + r], fill=f)
        d.rectangle([cx - r, cy - t, cx + r, cy + t], fill=f)
    elif shape == "ring":
        d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=f, width=max(2, int(r * 0.3)))
    else:
        raise ValueError(f"unknown shape {shape!r}")


def draw_object(d: ImageDraw.ImageDraw, obj: str, box: tuple[int, int, int, int], colors: dict[str, str],
                paint: Paint) -> None:
    """Composite objects; `colors` names each part's colour (e.g. {"body": "blue", "roof": "red"})."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    cx = (x0 + x1) / 2
    if obj == "tree":
        d.rectangle([cx - w * 0.1, y0 + h * 0.55, cx + w * 0.1, y1], fill=paint(colors["trunk"]))
        d.ellipse([x0, y0, x1, y0 + h * 0.7], fill=paint(colors["crown"]))
    elif obj == "house":
        d.rectangle([x0 + w * 0.1, y0 + h * 0.45, x1 - w * 0.1, y1], fill=paint(colors["walls"]))
        d.polygon([(x0, y0 + h * 0.47), (cx, y0), (x1, y0 + h * 0.47)], fill=paint(colors["roof"]))
    elif obj == "sun":
        r = min(w, h) / 2
        cy = (y0 + y1) / 2
        for i in range(8):
            a = math.pi * i / 4
            d.line([(cx + r * 0.55 * math.cos(a), cy + r * 0.55 * math.sin(a)),
                    (cx + r * 0.98 * math.cos(a), cy + r * 0.98 * math.sin(a))], fill=paint(colors["body"]),
                   width=max(2, int(r * 0.12)))
        d.ellipse([cx - r * 0.55, cy - r * 0.55, cx + r * 0.55, cy + r * 0.55], fill=paint(colors["body"]))
    elif obj == "flower":
        d.rectangle([cx - max(1, w * 0.04), y0 + h * 0.45, cx + max(1, w * 0.04), y1], fill=paint(colors["stem"]))
        pr = w * 0.2
        fc = y0 + h * 0.3
        for i in range(6):
            a = math.pi * i / 3
            px, py = cx + w * 0.27 * math.cos(a), fc + h * 0.17 * math.sin(a)
            d.ellipse([px - pr, py - pr * 0.8, px + pr, py + pr * 0.8], fill=paint(colors["petals"]))
        d.ellipse([cx - pr * 0.7, fc - pr * 0.7, cx + pr * 0.7, fc + pr * 0.7], fill=paint(colors["center"]))
    elif obj == "car":
        d.rectangle([x0 + w * 0.22, y0 + h * 0.15, x1 - w * 0.25, y0 + h * 0.5], fill=paint(colors["body"]))
        d.rectangle([x0, y0 + h * 0.45, x1, y0 + h * 0.8], fill=paint(colors["body"]))
        wr = h * 0.2
        for wx in (x0 + w * 0.25, x1 - w * 0.25):
            d.ellipse([wx - wr, y1 - 2 * wr, wx + wr, y1], fill=paint(colors["wheels"]))
    elif obj == "balloon":
        d.line([(cx, y0 + h * 0.65), (cx, y1)], fill=paint(colors["string"]), width=max(1, int(w * 0.04)))
        d.ellipse([x0 + w * 0.1, y0, x1 - w * 0.1, y0 + h * 0.7], fill=paint(colors["body"]))
    else:
        raise ValueError(f"unknown object {obj!r}")


OBJECT_PARTS = {  # part -> allowed colour names (first: the part that names the object's colour)
    "tree": {"crown": ("green",), "trunk": ("brown",)},
    "house": {"walls": ("yellow", "white", "orange", "blue", "pink", "grey"), "roof": ("red", "brown", "black")},
    "sun": {"body": ("yellow", "orange")},
    "flower": {"petals": ("red", "pink", "purple", "white", "blue"), "center": ("yellow",), "stem": ("green",)},
    "car": {"body": ("red", "blue", "green", "yellow", "white", "black", "orange"), "wheels": ("black", "grey")},
    "balloon": {"body": ("red", "blue", "green", "yellow", "purple", "pink", "orange"), "string": ("grey", "black")},
}


def draw_text(d: ImageDraw.ImageDraw, text: str, xy: tuple[int, int], font, color: str, paint: Paint) -> None:
    """Text without anti-aliasing (fontmode "1"): every glyph pixel carries exactly its colour."""
    mode = d.fontmode
    d.fontmode = "1"
    d.text(xy, text, font=font, fill=paint(color))
    d.fontmode = mode


def draw_mini_chart(d: ImageDraw.ImageDraw, kind: str, box: tuple[int, int, int, int], values: list[float],
                    color: str, paint: Paint) -> None:
    """A small bar or line chart on a white panel with black axes."""
    x0, y0, x1, y1 = box
    d.rectangle([x0, y0, x1 - 1, y1 - 1], fill=paint("white"))
    ax0, ay0, ax1, ay1 = x0 + 4, y0 + 4, x1 - 5, y1 - 5
    d.line([(ax0, ay0), (ax0, ay1), (ax1, ay1)], fill=paint("black"), width=1)
    n = len(values)
    top = max(values)
    if kind == "bar":
        slot = (ax1 - ax0 - 2) / n
        for i, v in enumerate(values):
            bx = ax0 + 2 + i * slot
            d.rectangle([bx + slot * 0.15, ay1 - 1 - (ay1 - ay0 - 3) * v / top, bx + slot * 0.85, ay1 - 1],
                        fill=paint(color))
    else:
        pts = [(ax0 + 3 + (ax1 - ax0 - 6) * i / (n - 1), ay1 - 3 - (ay1 - ay0 - 6) * v / top) for i, v in enumerate(values)]
        d.line(pts, fill=paint(color), width=2)
