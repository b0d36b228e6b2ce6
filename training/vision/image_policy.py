"""How any image becomes the encoder's square input, and why one is refused.

Policy (documented in the README's Vision section):
- Decode with Pillow. Undecodable or truncated bytes -> drop ``image_corrupt``.
- More than ``MAX_PIXELS`` pixels (checked from the header, before decoding) -> ``image_too_large``;
  a side under ``MIN_SIDE`` px -> ``image_too_small``; a long/short side ratio over ``MAX_ASPECT``
  -> ``image_extreme_aspect`` (letterboxing would leave a few rows of content).
- Colour: grayscale (L, I, I;16, F, 1), palette (P), CMYK, YCbCr, LAB, HSV and alpha modes (LA, RGBA,
  PA) are converted to RGB; alpha is composited over white. The conversion is counted, not dropped.
- Size and aspect: letterbox. Scale the longer side to ``size`` (bicubic), keep the aspect ratio,
  centre on a mid-grey square. ``Letterbox`` records scale and offsets so boxes in the source
  image map into the model's frame (``to_frame``).
- Pixels: (x / 255 - 0.5) / 0.5 per channel, float32 [3, size, size].
"""
from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import numpy as np
from PIL import Image

MAX_PIXELS = 40_000_000
MIN_SIDE = 8
MAX_ASPECT = 16.0
PAD_GREY = 127


class ImageRejected(ValueError):
    """An image the policy refuses; ``reason`` is the drop reason for the loader's report."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True)
class Letterbox:
    scale: float
    off_x: float
    off_y: float
    size: int
    source_mode: str     # the decoded image's mode before conversion ("RGB", "L", "CMYK", ...)

    def to_frame(self, box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        """A pixel box of the source image -> a box normalised to [0, 1] in the model's frame."""
        x0, y0, x1, y1 = box
        s, n = self.scale, float(self.size)
        return ((x0 * s + self.off_x) / n, (y0 * s + self.off_y) / n, (x1 * s + self.off_x) / n, (y1 * s + self.off_y) / n)


def to_rgb(im):
    if im.mode == "RGB":
        return im
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(bg, rgba).convert("RGB")
    if im.mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        a = np.asarray(im, dtype=np.float64)
        lo, hi = float(a.min()), float(a.max())
        a = np.zeros_like(a) if hi <= lo else (a - lo) / (hi - lo) * 255.0
        return Image.fromarray(a.astype(np.uint8), "L").convert("RGB")
    return im.convert("RGB")


def load_image(data: bytes, size: int):
    """Encoded bytes -> (float32 array [3, size, size], Letterbox); raises ImageRejected."""
    if not data:
        raise ImageRejected("image_corrupt", "empty bytes")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data))
            w, h = im.size
            if w * h > MAX_PIXELS:
                raise ImageRejected("image_too_large", f"{w}x{h} px")
            im.load()
    except ImageRejected:
        raise
    except Exception as e:  # noqa: BLE001  (Pillow raises many types on hostile bytes)
        raise ImageRejected("image_corrupt", type(e).__name__) from None
    if min(w, h) < MIN_SIDE:
        raise ImageRejected("image_too_small", f"{w}x{h} px")
    if max(w, h) / min(w, h) > MAX_ASPECT:
        raise ImageRejected("image_extreme_aspect", f"{w}x{h} px")
    try:
        return letterbox(im, size)
    except Exception as e:  # noqa: BLE001
        raise ImageRejected("image_corrupt", f"mode {im.mode}: {type(e).__name__}") from None


def letterbox(im, size: int):
    """A decoded PIL image (any mode, size, aspect) -> (float32 [3, size, size], Letterbox)."""
    mode = im.mode
    w, h = im.size
    rgb = to_rgb(im)
    s = size / max(w, h)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    rgb = rgb.resize((nw, nh), Image.BICUBIC)
    canvas = Image.new("RGB", (size, size), (PAD_GREY,) * 3)
    ox, oy = (size - nw) // 2, (size - nh) // 2
    canvas.paste(rgb, (ox, oy))
    arr = np.asarray(canvas, dtype=np.float32).transpose(2, 0, 1) / 127.5 - 1.0
    return np.ascontiguousarray(arr), Letterbox(nw / w, float(ox), float(oy), size, mode)
