"""Which characters NFKC maps one by one, whatever surrounds them.

Why: the dedup kernel folds each distinct character of a batch once (filters/dedup_native.py).
If NFKC could be folded in the same way, texts that are not already in NFKC (a no-break space, an
ellipsis, a ligature or a full-width letter is enough) would not need `unicodedata.normalize` on
the whole text first. NFKC is per character except where canonical reordering or composition
crosses from one character into the next, and both need a character that is not a plain starter:

- reordering only moves marks of non-zero combining class, and never across a starter (class 0);
- composition joins a starter with a later character that is the second half of a canonical
  decomposition (a "composition second": combining marks, Hangul vowel and trailing jamo, and a
  few vowel signs of class 0).

So a text whose every character's full compatibility decomposition (NFKD) begins with a starter
that is not a composition second normalises to the concatenation of its characters' NFKC: no
mark can move or join across the boundary at the front of a character, and the character after
a boundary never joins the one before it. `per_char(c)` says whether `c` is such a character.
Others (combining marks, jamo, the vowel signs below) make their text go through
`unicodedata.normalize` whole.

The class-0 composition seconds are listed below for the Unicode version of this Python
(`unicodedata.unidata_version`); tests/filters/test_nfkc_chars.py recomputes the list from every
code point and checks the per-character rule against `unicodedata.normalize` on random text.
"""
from __future__ import annotations

import functools
import unicodedata

# Class-0 characters that are the second half of some two-character canonical decomposition
# (Unicode 14, every code point scanned; composition exclusions kept: a longer list is safe).
STARTER_SECONDS = frozenset([
    0x09BE, 0x09D7, 0x0B3E, 0x0B56, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC2, 0x0CD5, 0x0CD6, 0x0D3E, 0x0D57,
    0x0DCF, 0x0DDF, 0x0FB5, 0x0FB7, 0x102E, 0x1B35, 0x11127, 0x1133E, 0x11357, 0x114B0, 0x114BA,
    0x114BD, 0x115AF, 0x11930,
])
HANGUL_V = range(0x1161, 0x1176)  # vowel jamo: join a leading jamo (composition by algorithm)
HANGUL_T = range(0x11A8, 0x11C3)  # trailing jamo: join an LV syllable


def starter_seconds(unicode_cps=range(0x110000)) -> set[int]:
    """Recompute STARTER_SECONDS from the running Python's character database."""
    seconds = set()
    for cp in unicode_cps:
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                seconds.add(int(parts[1], 16))
    return {s for s in seconds if unicodedata.combining(chr(s)) == 0}


def _joins_previous(c: str) -> bool:
    cp = ord(c)
    return unicodedata.combining(c) != 0 or cp in STARTER_SECONDS or cp in HANGUL_V or cp in HANGUL_T


@functools.lru_cache(maxsize=1 << 16)
def per_char(c: str) -> bool:
    """True when NFKC maps `c` the same way in any text whose characters are all per_char: its
    NFKD begins with a starter that is not a composition second."""
    return not _joins_previous(unicodedata.normalize("NFKD", c)[0])
