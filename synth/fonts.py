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


_FONT_RC = ("serif", "sans-serif", "cursive", "fantasy", "monospace")


@functools.lru_cache(maxsize=None)
def fast_font_lookup() -> bool:
    """Memoise matplotlib's font matching per family/style, not per size (this process only).

    matplotlib caches `findfont` per (FontProperties incl. size, font rcParams incl. font.size) and a
    miss scores every installed font (~3-5 ms). Charts draw text at ~25 sizes in 10 families, so a
    worker keeps missing for hundreds of charts (and forever with vary_size). The size only enters
    the match through `score_size`, which is 0 for scalable fonts: when every installed font is
    scalable, the font found is the same at every size and one entry per family serves all sizes.
    `_find_fonts_by_props` (the per-family fallback list every text draw resolves) is memoised on
    the same key. The rc font lists only matter for generic families (serif, sans-serif, ...), so
    only those keys read them. Drawing is unchanged (tests redraw stored chart code in a fresh
    interpreter, without this, and compare PNG bytes). Returns whether the memo is installed (not
    with bitmap fonts installed).
    """
    import matplotlib  # noqa: PLC0415  (lazy: set up on first chart)
    from matplotlib import font_manager  # noqa: PLC0415  (lazy: set up on first chart)
    fm = font_manager.fontManager
    if any(f.size != "scalable" for f in (*fm.ttflist, *fm.afmlist)):
        return False
    aliases = font_manager.font_family_aliases
    from_any = font_manager.FontProperties._from_any

    def key(prop, *args):
        fam = tuple(prop.get_family())
        rc = matplotlib.rcParams
        generic = tuple(tuple(rc[f"font.{k}"]) for k in _FONT_RC) if any(f in aliases for f in fam) else None
        return (fam, prop.get_style(), prop.get_variant(), prop.get_weight(), prop.get_stretch(), prop.get_file(),
                generic) + args

    def memoised(original):
        memo: dict = {}

        def lookup(prop, fontext="ttf", directory=None, fallback_to_default=True, rebuild_if_missing=True):
            prop = from_any(prop)
            k = key(prop, fontext, directory, fallback_to_default, rebuild_if_missing)
            found = memo.get(k)
            if found is None:
                found = memo[k] = original(prop, fontext, directory, fallback_to_default, rebuild_if_missing)
            return list(found) if isinstance(found, list) else found  # callers get their own list
        return lookup

    # bound methods; the wrappers shadow them on this instance only
    fm.findfont = memoised(fm.findfont)
    fm._find_fonts_by_props = memoised(fm._find_fonts_by_props)
    return True


@functools.lru_cache(maxsize=None)
def installed_families() -> frozenset[str]:
    from matplotlib import font_manager  # noqa: PLC0415  (lazy: set up on first chart)
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
    from matplotlib import font_manager  # noqa: PLC0415  (lazy: set up on first chart)
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
