"""Synthetic scenes: shapes, objects, words and small charts placed apart on a background.

`make_scene(rng, width, height)` returns the image and, per item, what it is, its colours and its
box measured from its own drawn pixels (the mask drawn with the same geometry). Items never
overlap (a gap of at least GAP pixels), so each box is also what a reader sees in the image.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from synth import fonts
from synth.rng import choice
from synth.scene_draw import (COLORS, OBJECT_PARTS, OBJECTS, SHAPES, draw_mini_chart, draw_object, draw_shape,
                              draw_text)

GAP = 6
WORDS = ("OPEN", "SALE", "HELLO", "CAFE", "EXIT", "STOP", "BOOKS", "PARK", "2024", "MENU", "TAXI", "HOTEL", "BAKERY",
         "GO", "LOVE", "MUSIC", "NEWS", "FRESH", "ZOO", "RUN")
PALE = {"light grey": (225, 225, 225), "beige": (240, 228, 205), "light blue": (205, 225, 245),
        "mint": (210, 240, 220), "lavender": (228, 218, 245), "cream": (250, 245, 225), "peach": (250, 222, 205)}
DARK = {"dark blue": (20, 32, 64), "charcoal": (45, 45, 48), "dark green": (18, 52, 36)}
TEXT_FONTS = ("DejaVu Sans", "DejaVu Serif", "Liberation Sans", "Liberation Serif", "DejaVu Sans Mono")


def _background(rng: np.random.Generator, w: int, h: int) -> tuple[Image.Image, str, bool]:
    kind = choice(rng, ("solid", "solid", "gradient", "noise", "stripes", "dark"))
    if kind == "dark":
        name = choice(rng, tuple(DARK))
        return Image.new("RGB", (w, h), DARK[name]), f"{name} background", True
    a = choice(rng, tuple(PALE))
    if kind == "solid":
        return Image.new("RGB", (w, h), PALE[a]), f"{a} background", False
    b = choice(rng, tuple(k for k in PALE if k != a))
    ca, cb = np.array(PALE[a], float), np.array(PALE[b], float)
    if kind == "gradient":
        t = np.linspace(0, 1, h)[:, None, None] if rng.random() < 0.5 else np.linspace(0, 1, w)[None, :, None]
        arr = np.broadcast_to(ca + (cb - ca) * t, (h, w, 3))
        desc = f"gradient background from {a} to {b}"
    elif kind == "noise":
        arr = ca + rng.normal(0, 5, (h, w, 3))
        desc = f"textured {a} background"
    else:
        period = int(rng.integers(12, 40))
        stripes = ((np.arange(w) // period) % 2)[None, :, None] if rng.random() < 0.5 else \
            ((np.arange(h) // period) % 2)[:, None, None]
        arr = np.broadcast_to(np.where(stripes == 0, ca, cb), (h, w, 3))
        desc = f"{a} and {b} striped background"
    # pale backgrounds stay within [170, 250]: never an item's exact colour
    return Image.fromarray(np.clip(np.rint(arr), 170, 250).astype(np.uint8), "RGB"), desc, False


def _place(rng: np.random.Generator, w: int, h: int, bw: int, bh: int, taken: list[tuple[int, int, int, int]]):
    for _ in range(60):
        x0 = int(rng.integers(2, max(3, w - bw - 2)))
        y0 = int(rng.integers(2, max(3, h - bh - 2)))
        box = (x0, y0, x0 + bw, y0 + bh)
        if all(box[2] + GAP <= t[0] or t[2] + GAP <= box[0] or box[3] + GAP <= t[1] or t[3] + GAP <= box[1]
               for t in taken):
            return box
    return None


def _size_word(area_frac: float) -> str:
    return "small" if area_frac < 0.025 else "large" if area_frac > 0.09 else ""


def _draw_item(d: ImageDraw.ImageDraw, it: dict[str, Any], paint) -> None:
    k = it["kind"]
    if k == "shape":
        draw_shape(d, it["shape"], it["slot"], it["color"], paint)
    elif k == "object":
        draw_object(d, it["object"], it["slot"], it["parts"], paint)
    elif k == "text":
        draw_text(d, it["text"], (it["slot"][0], it["slot"][1] - it["font_offset"]), fonts.pil_font(it["font"], it["font_size"]),
                  it["color"], paint)
    else:
        draw_mini_chart(d, it["chart"], it["slot"], it["values"], it["color"], paint)


def make_scene(rng: np.random.Generator, width: int, height: int, max_items: int = 5) -> tuple[Image.Image, dict[str, Any]]:
    img, bg_desc, dark = _background(rng, width, height)
    n = int(rng.integers(1, max_items + 1))
    side = min(width, height)
    taken: list[tuple[int, int, int, int]] = []
    items: list[dict[str, Any]] = []
    colors = [c for c in COLORS if not (dark and c == "black")]
    for _ in range(n):
        kind = choice(rng, ("shape", "shape", "shape", "object", "object", "text", "chart"))
        it: dict[str, Any] = {"kind": kind}
        if kind == "shape":
            it.update(shape=choice(rng, SHAPES), color=choice(rng, colors))
            s = int(side * rng.uniform(0.12, 0.36))
            bw, bh = (int(s * 1.5), s) if it["shape"] in ("oval", "rectangle") else (s, s)
            it["colors"] = [it["color"]]
        elif kind == "object":
            obj = choice(rng, OBJECTS)
            parts = {p: choice(rng, tuple(c for c in opts if not (dark and c == "black")) or opts)
                     for p, opts in OBJECT_PARTS[obj].items()}
            if obj == "house" and parts["walls"] == parts["roof"]:
                parts["roof"] = "red" if parts["walls"] != "red" else "brown"
            it.update(object=obj, parts=parts, color=next(iter(parts.values())), colors=sorted(set(parts.values())))
            s = int(side * rng.uniform(0.16, 0.36))
            bw, bh = (int(s * 1.6), s) if obj == "car" else (s, int(s * 1.25)) if obj in ("tree", "flower", "balloon") else (s, s)
        elif kind == "text":
            word = choice(rng, WORDS)
            font = fonts.usable(choice(rng, TEXT_FONTS), "en")
            size = int(side * rng.uniform(0.08, 0.16))
            f = fonts.pil_font(font, size)
            l, t, r, b = f.getbbox(word)
            it.update(text=word, font=font, font_size=size, font_offset=t, color=choice(rng, colors))
            it["colors"] = [it["color"]]
            bw, bh = r - l + 1 + l, b - t + 1
        else:
            k = int(rng.integers(3, 7))
            it.update(chart=choice(rng, ("bar", "line")), values=[int(v) for v in rng.integers(2, 10, k)],
                      color=choice(rng, tuple(c for c in colors if c not in ("white", "black"))))
            it["colors"] = sorted({"white", "black", it["color"]})
            s = int(side * rng.uniform(0.22, 0.34))
            bw, bh = int(s * 1.3), s
        if bw >= width - 4 or bh >= height - 4:
            continue
        slot = _place(rng, width, height, bw, bh, taken)
        if slot is None:
            continue
        taken.append(slot)
        it["slot"] = list(slot)
        items.append(it)
    draw = ImageDraw.Draw(img)
    for it in items:
        mask = Image.new("L", (width, height), 0)
        _draw_item(ImageDraw.Draw(mask), it, lambda _c: 255)
        bbox = mask.getbbox()
        _draw_item(draw, it, lambda c: COLORS[c])
        it["box_px"] = list(bbox) if bbox else None
        it["box"] = [round(bbox[0] / width, 3), round(bbox[1] / height, 3), round(bbox[2] / width, 3),
                     round(bbox[3] / height, 3)] if bbox else None
        x0, y0, x1, y1 = bbox or it["slot"]
        it["size"] = _size_word((x1 - x0) * (y1 - y0) / (width * height))
        it["center"] = [round((x0 + x1) / 2 / width, 3), round((y0 + y1) / 2 / height, 3)]
    items = [it for it in items if it["box_px"]]
    return img, {"background": bg_desc, "dark": dark, "items": items, "width": width, "height": height}
