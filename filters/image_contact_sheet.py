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

THUMB = 128


def thumbnail(blob: bytes | None, side: int = THUMB) -> bytes | None:
    """A small JPEG of `blob` (None when it does not decode)."""
    if not blob:
        return None
    from PIL import Image  # noqa: PLC0415

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
    from PIL import Image, ImageDraw, ImageFont  # noqa: PLC0415

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


def score_histogram(scores: Sequence[float], kept: Sequence[bool], path: str, cut: float | None,
                    title: str = "CLIP score") -> str:
    """Stacked histogram of kept vs dropped CLIP scores, with the cut drawn as a line."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    ok = [s for s, k in zip(scores, kept) if k and not math.isnan(s)]
    bad = [s for s, k in zip(scores, kept) if not k and not math.isnan(s)]
    lo = min(ok + bad + [-0.1])
    hi = max(ok + bad + [0.5])
    bins = [lo + i * (hi - lo) / 40 for i in range(41)]
    ax.hist([ok, bad], bins=bins, stacked=True, label=[f"kept ({len(ok)})", f"dropped ({len(bad)})"],
            color=["#2a7", "#c55"])
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


__all__ = ["thumbnail", "contact_sheet", "score_histogram"]
