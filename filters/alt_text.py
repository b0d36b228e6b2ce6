"""Junk rules for the text side of an image-text pair (alt attributes and figure captions).

Web alt text is often not a description at all: an empty attribute, the file name, a URL, a
generic word ("image", "logo"), keyword stuffing, or a paragraph pasted into the attribute. These
rules are cheap and explainable; each failure is one stable drop reason. Language ID and PII are
not here: they come from the text pipeline's filters (see filters/alt_text_lang_pii.py).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Any

R_EMPTY = "alt_empty"
R_FILENAME = "alt_filename"
R_URL = "alt_url"
R_GENERIC = "alt_generic"
R_TOO_SHORT = "alt_too_short"
R_TOO_LONG = "alt_too_long"
R_REPETITIVE = "alt_repetitive"
R_NO_LETTERS = "alt_no_letters"
REASONS = (R_EMPTY, R_FILENAME, R_URL, R_GENERIC, R_TOO_SHORT, R_TOO_LONG, R_REPETITIVE, R_NO_LETTERS)

_IMG_EXT = r"(?:jpe?g|png|gif|webp|svg|bmp|tiff?|heic|avif|ico)"
_FILENAME_RE = re.compile(rf"^[\w\-.()\[\] ~%+]*\.{_IMG_EXT}$", re.IGNORECASE)
_CAMERA_RE = re.compile(r"^(?:img|dsc|dscn|dcim|pxl|screenshot|screen shot|photo|image|pic|untitled)"
                        r"[\s_\-]*[\d_\-. ]+\w{0,4}$", re.IGNORECASE)
_URL_RE = re.compile(r"(?:https?://|ftp://|www\.|data:image/|\b[\w-]+\.(?:com|org|net|io|html?|php)\b/?)",
                     re.IGNORECASE)
_GENERIC = frozenset("""
image img photo photograph picture pic graphic icon logo banner thumbnail thumb spacer placeholder
untitled alt alt text alttext null none undefined n/a na blank default avatar profile picture
click here more read more image placeholder featured image header image hero image
""".split("\n")) - {""} | frozenset(w for w in """image img photo photograph picture pic graphic icon logo banner
thumbnail thumb spacer placeholder untitled alt null none undefined n/a na blank default avatar
""".split())
_WORD_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class AltTextConfig:
    min_chars: int = 5
    min_words: int = 2           # words for space-separated scripts; CJK counts characters instead
    max_chars: int = 500
    max_repeat_ratio: float = 0.5   # drop if unique words / words is below this (with >= 4 words)
    min_letter_ratio: float = 0.5   # letters / non-space chars

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def normalize(text: str | None) -> str:
    """NFKC, collapsed whitespace, stripped: what the pair stores as its text."""
    if not text:
        return ""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF


def alt_text_reason(text: str | None, cfg: AltTextConfig = AltTextConfig()) -> str | None:
    """The junk reason of `text` (normalised first), or None when it reads like a description."""
    t = normalize(text)
    if not t:
        return R_EMPTY
    low = t.lower().strip(" .:-_|")
    if _URL_RE.search(t):
        return R_URL
    if _FILENAME_RE.match(t) or _CAMERA_RE.match(t):
        return R_FILENAME
    if low in _GENERIC or re.sub(r"[\d_\-#. ]+$", "", low) in _GENERIC:
        return R_GENERIC
    if len(t) > cfg.max_chars:
        return R_TOO_LONG
    chars = [c for c in t if not c.isspace()]
    letters = sum(1 for c in chars if c.isalpha())
    if not chars or letters / len(chars) < cfg.min_letter_ratio:
        return R_NO_LETTERS
    words = [w.lower() for w in _WORD_RE.findall(t)]
    cjk = sum(1 for c in chars if _is_cjk(c))
    n_units = cjk + sum(1 for w in words if not any(_is_cjk(c) for c in w)) if cjk else len(words)
    if len(t) < cfg.min_chars or n_units < cfg.min_words:
        return R_TOO_SHORT
    if len(words) >= 4 and len(set(words)) / len(words) < cfg.max_repeat_ratio:
        return R_REPETITIVE
    return None


__all__ = ["AltTextConfig", "alt_text_reason", "normalize", "REASONS"]
