"""Font choice for charts, tables and scenes: explicit families, CJK-capable where needed.

Charts name a font family per language (matplotlib falls back glyph by glyph along the list);
tables and scenes draw with PIL and need a font file path, found through matplotlib's font list.
A family missing on this machine is replaced by DejaVu Sans (bundled with matplotlib) so output
stays renderable; the choice is made after the random draw, so the random stream never changes.
"""
from __future__ import annotations

import functools
import logging
import warnings

LATIN_FAMILIES = ("DejaVu Sans", "DejaVu Serif", "Liberation Sans", "Liberation Serif", "Liberation Sans Narrow",
                  "DejaVu Sans Mono")
CJK_FAMILIES = {"ja": ("Noto Sans CJK JP", "Noto Serif CJK JP"), "zh": ("Noto Sans CJK SC", "Noto Serif CJK SC")}
FALLBACK = "DejaVu Sans"


def quiet_matplotlib() -> None:
    """Missing-glyph and findfont chatter would flood the logs of a large run."""
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=r"Glyph .* missing from")
    warnings.filterwarnings("ignore", message=r".*findfont.*")


@functools.lru_cache(maxsize=None)
def installed_families() -> frozenset[str]:
    from matplotlib import font_manager
    return frozenset(f.name for f in font_manager.fontManager.ttflist)


def families_for(lang: str) -> tuple[str, ...]:
    return CJK_FAMILIES.get(lang, LATIN_FAMILIES)


def usable(family: str, lang: str) -> str:
    """`family` if installed, else a CJK family that is, else DejaVu Sans."""
    have = installed_families()
    if family in have:
        return family
    for alt in CJK_FAMILIES.get(lang, ()):
        if alt in have:
            return alt
    return FALLBACK


def has_cjk_font() -> bool:
    have = installed_families()
    return any(f in have for fams in CJK_FAMILIES.values() for f in fams)


@functools.lru_cache(maxsize=None)
def font_file(family: str) -> str:
    """Path of the regular face of `family` (DejaVu Sans when not installed)."""
    from matplotlib import font_manager
    prop = font_manager.FontProperties(family=family, weight="normal", style="normal")
    try:
        return font_manager.findfont(prop, fallback_to_default=False)
    except ValueError:
        return font_manager.findfont(font_manager.FontProperties(family=FALLBACK))


@functools.lru_cache(maxsize=256)
def pil_font(family: str, size: int):
    """A PIL FreeType font of `family` at `size` pixels (cached: loading a CJK .ttc takes ~10 ms)."""
    from PIL import ImageFont
    return ImageFont.truetype(font_file(family), size=int(size))
