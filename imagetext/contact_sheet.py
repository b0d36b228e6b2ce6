"""Contact sheets (a grid of thumbnails with their text and score) and the CLIP-score histogram,
as PNG files for the dataset report: what a reviewer looks at to judge a filter in seconds.

Images that could not be decoded are drawn as a grey tile naming the drop reason. Text is drawn
with Pillow's default font; nothing from the page is interpreted (it is pixels, not HTML).
"""
from __future__ import annotations

import io
import math
import os
import textwrap
from typing import Sequence

import matplotlib
from PIL import Image, ImageDraw, ImageFont

matplotlib.use("Agg")   # files only, never a window
import matplotlib.pyplot as plt  # noqa: E402

THUMB = 128


def thumbnail(blob: bytes | None, side: int = THUMB) -> bytes | None:
    """A small JPEG of `blob` (None when it does not decode)."""
    if not blob:
        return None
    try:
        with Image.open(io.BytesIO(blob)) as im:
            im = im.convert("RGB")
            im.thumbnail((side, side))
            buf = io.BytesIO()
            im.save(buf, format="JPEG", quality=80)
            return buf.getvalue()
    except Exception:  # noqa: BLE001
        return None


def contact_sheet(tiles: Sequence[tuple[bytes | None, str]], path: str, title: str, cols: int = 6,
                  side: int = THUMB) -> str:
    """tiles: (thumbnail bytes or None, label); writes a PNG grid at `path`."""
    font = ImageFont.load_default()
    n = max(1, len(tiles))
    cols = min(cols, n)
    rows = math.ceil(n / cols)
    cell_w, label_h, head = side + 12, 46, 28
    sheet = Image.new("RGB", (cols * cell_w + 8, head + rows * (side + label_h + 8)), (255, 255, 255))
    d = ImageDraw.Draw(sheet)
    d.text((8, 6), title[:120], fill=(0, 0, 0), font=font)
    for k, (thumb, label) in enumerate(tiles):
        x = 8 + (k % cols) * cell_w
        y = head + (k // cols) * (side + label_h + 8)
        im = None
        if thumb:
            try:
                im = Image.open(io.BytesIO(thumb)).convert("RGB")
            except Exception:  # noqa: BLE001
                im = None
        if im is None:
            d.rectangle((x, y, x + side - 1, y + side - 1), fill=(200, 200, 200), outline=(120, 120, 120))
            d.text((x + 6, y + side // 2 - 6), "no image", fill=(60, 60, 60), font=font)
        else:
            sheet.paste(im, (x + (side - im.width) // 2, y + (side - im.height) // 2))
        safe = "".join(c if c.isprintable() else " " for c in label)
        for j, line in enumerate(textwrap.wrap(safe, 22)[:3]):
            d.text((x, y + side + 2 + j * 14), line, fill=(30, 30, 30), font=font)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    sheet.save(path, format="PNG")
    return path


HIST_LO, HIST_HI, HIST_BINS = -1.0, 1.0, 200


def hist_bin(score: float) -> int:
    """Bin of a cosine in the fixed fine histogram the report plots (NaN -> -1)."""
    if score is None or math.isnan(score):
        return -1
    k = int((score - HIST_LO) / (HIST_HI - HIST_LO) * HIST_BINS)
    return min(max(k, 0), HIST_BINS - 1)


def score_histogram(kept: Sequence[int], dropped: Sequence[int], path: str, cut: float | None,
                    title: str = "CLIP score") -> str:
    """Stacked bar histogram (fixed bins from `hist_bin`) of kept vs dropped scores, cut as a line."""
    width = (HIST_HI - HIST_LO) / HIST_BINS
    used = [i for i in range(HIST_BINS) if kept[i] or dropped[i]]
    lo = max(0, (min(used) if used else 90) - 2)
    hi = min(HIST_BINS, (max(used) if used else 130) + 3)
    xs = [HIST_LO + i * width for i in range(lo, hi)]
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    ax.bar(xs, kept[lo:hi], width=width, align="edge", color="#2a7", label=f"kept ({sum(kept)})")
    ax.bar(xs, dropped[lo:hi], width=width, align="edge", bottom=kept[lo:hi], color="#c55",
           label=f"dropped ({sum(dropped)})")
    if cut is not None and math.isfinite(cut):
        ax.axvline(cut, color="k", linestyle="--", linewidth=1, label=f"cut {cut:.3f}")
    ax.set_xlabel("cosine(image, text)")
    ax.set_ylabel("pairs")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


__all__ = ["thumbnail", "contact_sheet", "score_histogram", "hist_bin", "HIST_BINS"]
