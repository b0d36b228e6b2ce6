"""Decode and validate one image with Pillow, then re-encode it to a bounded size.

Every bad input ends as an `ImageCheck` with a drop `reason`, never an exception: empty files,
HTML served as image/jpeg, corrupt or truncated data, decompression bombs (the pixel count is read
from the header and checked *before* any pixel is decoded), unsupported formats, SVG (rasterised
with cairosvg when configured and installed, else dropped), sides and aspect ratios out of range.
Decode time is bounded by the byte cap and the pixel cap (Pillow decodes in chunks proportional to
both), and animated images only ever decode their first frame.
"""
from __future__ import annotations

import hashlib
import io
import re
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

from defusedxml import ElementTree
from PIL import Image

from corpus.errors import ConfigError

# Formats we accept, by Pillow's format name, and the mime each one is written as after re-encoding.
ACCEPTED_FORMATS = ("JPEG", "PNG", "WEBP", "GIF")
OUTPUT_MIME = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}

# Drop reasons (stable strings: they name report files and contact sheets).
R_EMPTY = "image_empty"
R_TOO_MANY_BYTES = "image_too_many_bytes"
R_NOT_IMAGE = "image_not_an_image"
R_HTML = "image_is_html"
R_UNSUPPORTED = "image_unsupported_format"
R_SVG = "image_svg_dropped"
R_BOMB = "image_too_many_pixels"
R_TRUNCATED = "image_truncated"
R_CORRUPT = "image_corrupt"
R_TOO_SMALL = "image_too_small"
R_TOO_LARGE = "image_too_large"
R_ASPECT = "image_bad_aspect_ratio"
R_ANIMATED = "image_animated"
R_SLOW = "image_decode_timeout"
REASONS = (R_EMPTY, R_TOO_MANY_BYTES, R_NOT_IMAGE, R_HTML, R_UNSUPPORTED, R_SVG, R_BOMB, R_TRUNCATED,
           R_CORRUPT, R_TOO_SMALL, R_TOO_LARGE, R_ASPECT, R_ANIMATED, R_SLOW)


@dataclass(frozen=True)
class ImageCheckConfig:
    max_bytes: int = 20 * 1024 * 1024        # larger downloads are not decoded at all
    max_pixels: int = 40_000_000             # decompression-bomb cap, checked from the header
    min_side: int = 32                       # smaller images (spacers, icons) carry no content
    max_side: int = 12_000                   # input side cap (panoramas, strips)
    max_aspect: float = 4.0                  # long side / short side
    out_max_side: int = 512                  # re-encode so the longer side is at most this
    out_format: str = "JPEG"                 # JPEG | PNG | WEBP
    out_quality: int = 90
    svg: str = "rasterize"                   # rasterize (cairosvg + libcairo) | drop
    animated: str = "drop"                   # drop (the bad-input list) | first_frame
    decode_timeout_s: float = 10.0           # an image that took longer is dropped (R_SLOW)

    def __post_init__(self) -> None:
        if self.out_format not in OUTPUT_MIME:
            raise ConfigError(f"image out_format must be one of {sorted(OUTPUT_MIME)}, got {self.out_format!r}")
        if self.svg not in ("drop", "rasterize"):
            raise ConfigError(f"image svg must be 'drop' or 'rasterize', got {self.svg!r}")
        if self.animated not in ("first_frame", "drop"):
            raise ConfigError(f"image animated must be 'first_frame' or 'drop', got {self.animated!r}")
        if self.min_side < 1 or self.max_side < self.min_side or self.out_max_side < 1 or self.max_aspect < 1:
            raise ConfigError("image sides: need 1 <= min_side <= max_side, out_max_side >= 1, max_aspect >= 1")
        if self.svg == "rasterize":
            try:
                import cairosvg  # noqa: F401,PLC0415  (lazy: optional, needs libcairo)
            except (ImportError, OSError) as e:
                raise ConfigError(f"svg=rasterize needs the cairosvg package and libcairo ({e}); "
                                  "install it or use svg=drop") from None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImageCheck:
    """Outcome of checking one image; `reason` is None when the image is usable."""
    reason: str | None
    detail: str = ""
    orig_format: str | None = None
    orig_width: int | None = None
    orig_height: int | None = None
    animated: bool = False
    image: bytes | None = None               # re-encoded bytes (kept images only)
    mime: str | None = None
    width: int | None = None
    height: int | None = None
    sha256: str | None = None                # of the re-encoded bytes (what the dataset stores)
    phash: str | None = None                 # imagehash.phash, 16 hex digits
    decode_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.reason is None


def sniff(data: bytes) -> str | None:
    """Name what the bytes are from their first bytes, whatever the server claimed."""
    head = data[:512].lstrip()
    if data[:3] == b"\xff\xd8\xff":
        return "JPEG"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "PNG"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    low = head[:256].lower()
    if low.startswith(b"<svg") or (low.startswith(b"<?xml") and b"<svg" in data[:4096].lower()):
        return "SVG"
    if low.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<!--", b"<?php")) or b"<html" in low:
        return "HTML"
    return None


def _svg_aspect(data: bytes) -> float | None:
    """Aspect ratio from the root's width/height or viewBox (None if unknown), parsed without entities."""
    root = ElementTree.fromstring(data)
    vb = (root.get("viewBox") or "").replace(",", " ").split()

    def num(v):
        m = re.match(r"\s*([0-9.]+)", v or "")
        return float(m.group(1)) if m else None
    w, h = num(root.get("width")), num(root.get("height"))
    if (not w or not h) and len(vb) == 4:
        w, h = float(vb[2]), float(vb[3])
    if not w or not h:
        return None
    return max(w, h) / min(w, h)


def _rasterize_svg(data: bytes, cfg: ImageCheckConfig) -> bytes:
    """SVG -> PNG at out_max_side. unsafe=False: no entity expansion (defusedxml) and cairosvg's
    safe_fetch, which loads only data: URLs (a file:// or http:// <image> would be a local-file read
    or SSRF). The aspect ratio is checked before any surface is allocated."""
    import cairosvg  # noqa: PLC0415  (optional dependency)

    aspect = _svg_aspect(data)
    if aspect is not None and aspect > cfg.max_aspect:
        raise _SvgAspect(f"SVG aspect {aspect:.1f} > {cfg.max_aspect}")
    return cairosvg.svg2png(bytestring=data, output_width=cfg.out_max_side, unsafe=False)


class _SvgAspect(ValueError):
    pass


def _reencode(im, cfg: ImageCheckConfig) -> tuple[bytes, int, int]:
    if im.mode not in ("RGB", "L"):
        rgba = im.convert("RGBA")
        bg = Image.new("RGB", rgba.size, (255, 255, 255))
        bg.paste(rgba, mask=rgba.getchannel("A"))
        im = bg
    elif im.mode == "L":
        im = im.convert("RGB")
    w, h = im.size
    scale = cfg.out_max_side / max(w, h)
    if scale < 1.0:
        im = im.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    kw: dict[str, Any] = {"quality": cfg.out_quality} if cfg.out_format in ("JPEG", "WEBP") else {"optimize": False}
    im.save(buf, format=cfg.out_format, **kw)
    return buf.getvalue(), im.size[0], im.size[1]


def check_image(data: bytes | None, cfg: ImageCheckConfig = ImageCheckConfig(),
                content_type: str | None = None) -> ImageCheck:
    """Validate and re-encode `data`. Never raises on bad bytes; see the module docstring."""
    t0 = time.perf_counter()
    if not data:
        return ImageCheck(R_EMPTY, "zero bytes")
    if len(data) > cfg.max_bytes:
        return ImageCheck(R_TOO_MANY_BYTES, f"{len(data)} bytes > {cfg.max_bytes}")
    kind = sniff(data)
    if kind == "HTML":
        return ImageCheck(R_HTML, f"HTML served as {content_type or 'an image'}")
    if kind == "SVG":
        if cfg.svg == "drop":
            return ImageCheck(R_SVG, "SVG dropped by config", orig_format="SVG")
        try:
            data = _rasterize_svg(data, cfg)
        except _SvgAspect as e:
            return ImageCheck(R_ASPECT, str(e), orig_format="SVG")
        except Exception as e:  # noqa: BLE001  (any failure of a third-party rasteriser is a bad image)
            return ImageCheck(R_CORRUPT, f"SVG rasterisation failed: {type(e).__name__}: {str(e)[:120]}",
                              orig_format="SVG")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=None)
            fmt = im.format
            w, h = im.size
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        return ImageCheck(R_BOMB, str(e)[:200])
    except Image.UnidentifiedImageError:
        if kind is not None:   # the magic bytes of a known format, but Pillow cannot parse the rest
            return ImageCheck(R_CORRUPT, f"{kind} signature but unreadable header", orig_format=kind)
        return ImageCheck(R_NOT_IMAGE, f"unidentified bytes ({content_type or 'no content type'})")
    except Exception as e:  # noqa: BLE001  (Pillow raises many types on hostile headers)
        return ImageCheck(R_CORRUPT, f"{type(e).__name__}: {str(e)[:160]}")
    base = {"orig_format": "SVG" if kind == "SVG" else fmt, "orig_width": w, "orig_height": h}
    if fmt not in ACCEPTED_FORMATS:
        return ImageCheck(R_UNSUPPORTED, f"format {fmt}", **base)
    if w * h > cfg.max_pixels:
        return ImageCheck(R_BOMB, f"{w}x{h} = {w * h} pixels > {cfg.max_pixels}", **base)
    animated = bool(getattr(im, "is_animated", False))
    if animated and cfg.animated == "drop":
        return ImageCheck(R_ANIMATED, "animated image dropped by config", animated=True, **base)
    if min(w, h) >= 1 and max(w, h) / min(w, h) > cfg.max_aspect:   # before size: a banner is a banner
        return ImageCheck(R_ASPECT, f"{w}x{h}: aspect > {cfg.max_aspect}", animated=animated, **base)
    if min(w, h) < cfg.min_side:
        return ImageCheck(R_TOO_SMALL, f"{w}x{h}: a side < {cfg.min_side}", animated=animated, **base)
    if max(w, h) > cfg.max_side:
        return ImageCheck(R_TOO_LARGE, f"{w}x{h}: a side > {cfg.max_side}", animated=animated, **base)
    try:
        if animated:
            im.seek(0)
        im.load()  # first frame only: later GIF/WEBP frames are never decoded
        if fmt == "PNG" or fmt == "JPEG":
            # a file whose pixel data ends early loads "fine" for some encoders: re-open and verify
            Image.open(io.BytesIO(data)).verify()
        out, ow, oh = _reencode(im, cfg)
        import imagehash  # noqa: PLC0415

        ph = str(imagehash.phash(im.convert("RGB")))
    except OSError as e:
        msg = str(e)
        low = msg.lower()
        reason = R_TRUNCATED if ("truncated" in low or "broken data stream" in low or "end of file" in low
                                 or "buffer is not large enough" in msg) else R_CORRUPT
        return ImageCheck(reason, msg[:200], animated=animated, **base)
    except Exception as e:  # noqa: BLE001  (SyntaxError, ValueError, struct.error... from bad streams)
        return ImageCheck(R_CORRUPT, f"{type(e).__name__}: {str(e)[:160]}", animated=animated, **base)
    finally:
        try:
            im.close()
        except Exception:  # noqa: BLE001
            pass
    ms = (time.perf_counter() - t0) * 1000.0
    if ms > cfg.decode_timeout_s * 1000.0:
        return ImageCheck(R_SLOW, f"decode took {ms:.0f} ms", animated=animated, decode_ms=ms, **base)
    return ImageCheck(None, "", animated=animated, image=out, mime=OUTPUT_MIME[cfg.out_format], width=ow, height=oh,
                      sha256=hashlib.sha256(out).hexdigest(), phash=ph, decode_ms=ms, **base)


__all__ = ["ImageCheckConfig", "ImageCheck", "check_image", "sniff", "REASONS", "ACCEPTED_FORMATS"]
