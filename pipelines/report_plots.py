"""The report page's two chart kinds (stage funnel, score histogram) drawn as PNGs with Pillow.

Why not matplotlib: importing it and laying out one figure cost about half a CPU-second, paid by
every `cidermill text` job for a bar chart; Pillow loads in a few milliseconds. The charts are
plain: bars, their counts, axis end labels, a title. Same stats give the same bytes.
"""
from __future__ import annotations

from typing import Sequence

GREY, GREEN, BLUE, INK, RULE = "#d0d7de", "#2da44e", "#0969da", "#222222", "#8c959f"


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _num(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e6 else f"{x:.3g}"


def funnel_png(names: Sequence[str], rows_in: Sequence[int], kept: Sequence[int], path: str) -> None:
    """One horizontal bar per stage: rows in (grey) with kept (green) over it, counts at the right."""
    from PIL import Image, ImageDraw

    font = _font(13)
    label_w = 20 + max([int(font.getlength(n)) for n in names] + [40])
    bar_h, gap, top, width = 22, 10, 34, 720
    height = top + len(names) * (bar_h + gap) + 24
    img = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(img)
    scale = max([*rows_in, 1])
    span = width - label_w - 130
    d.rectangle([label_w, 10, label_w + 12, 22], fill=GREY)
    d.text((label_w + 18, 9), "rows in", fill=INK, font=font)
    d.rectangle([label_w + 90, 10, label_w + 102, 22], fill=GREEN)
    d.text((label_w + 108, 9), "kept", fill=INK, font=font)
    for i, (name, n_in, n_kept) in enumerate(zip(names, rows_in, kept)):
        y = top + i * (bar_h + gap)
        d.text((10, y + 4), name, fill=INK, font=font)
        d.rectangle([label_w, y, label_w + round(span * n_in / scale), y + bar_h], fill=GREY)
        if n_kept:
            d.rectangle([label_w, y, label_w + round(span * n_kept / scale), y + bar_h], fill=GREEN)
        d.text((label_w + span + 8, y + 4), f"{n_kept} / {n_in}", fill=INK, font=font)
    d.line([label_w, height - 18, label_w, top - 4], fill=RULE)
    d.text((label_w, height - 16), "rows (kept / in)", fill=INK, font=_font(11))
    img.save(path, optimize=False)


def histogram_png(title: str, edges: Sequence[float], counts: Sequence[int], path: str) -> None:
    """Bars over [edges[0], edges[-1]] with widths from the edges; end labels on both axes."""
    from PIL import Image, ImageDraw

    font, small = _font(12), _font(10)
    width, height, left, right, top, bottom = 360, 234, 44, 12, 26, 26
    img = Image.new("RGB", (width, height), "white")
    d = ImageDraw.Draw(img)
    d.text((left, 6), title, fill=INK, font=font)
    lo, hi = float(edges[0]), float(edges[-1])
    span_x = (hi - lo) or 1.0
    peak = max([*counts, 1])
    plot_w, plot_h = width - left - right, height - top - bottom
    for a, b, c in zip(edges[:-1], edges[1:], counts):
        if not c:
            continue
        x0 = left + round(plot_w * (float(a) - lo) / span_x)
        x1 = left + round(plot_w * (float(b) - lo) / span_x)
        y0 = top + plot_h - round(plot_h * c / peak)
        d.rectangle([x0, y0, max(x0, x1 - 1), top + plot_h], fill=BLUE)
    d.line([left, top + plot_h, left + plot_w, top + plot_h], fill=RULE)
    d.line([left, top, left, top + plot_h], fill=RULE)
    d.text((left, top + plot_h + 4), _num(lo), fill=INK, font=small)
    hi_label = _num(hi)
    d.text((left + plot_w - small.getlength(hi_label), top + plot_h + 4), hi_label, fill=INK, font=small)
    d.text((4, top - 2), _num(peak), fill=INK, font=small)
    d.text((4, top + plot_h - 12), "0", fill=INK, font=small)
    d.text((4, top + plot_h // 2 - 6), "rows", fill=INK, font=small)
    img.save(path, optimize=False)
