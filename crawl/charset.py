"""Decode fetched HTML bytes to text the way browsers do: HTTP header, BOM, <meta>, then detection.

Legacy pages (windows-1252, Shift_JIS, KOI8-R, GB2312, ...) decode correctly; labels follow the
WHATWG encoding spec where it differs from Python (latin-1 and ascii mean windows-1252).
"""
from __future__ import annotations

import codecs
import re

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_\-:.]+)""", re.I)
_CT_CHARSET = re.compile(r"charset\s*=\s*[\"']?\s*([a-zA-Z0-9_\-:.]+)", re.I)
_WHATWG = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "l1": "cp1252", "ascii": "cp1252",
           "us-ascii": "cp1252", "iso8859-1": "cp1252", "iso_8859-1": "cp1252", "windows-1252": "cp1252",
           "x-sjis": "shift_jis", "shift-jis": "shift_jis", "gb2312": "gb18030", "gbk": "gb18030",
           "iso-8859-9": "cp1254", "tis-620": "cp874", "ks_c_5601-1987": "euc-kr", "x-user-defined": "cp1252"}
_BOMS = [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")]


def normalize_label(label: str | None) -> str | None:
    """Python codec name for an encoding label, or None if unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _WHATWG.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    if name in ("utf-16", "utf-32"):  # a meta tag cannot really declare these; bytes are ASCII-compatible
        return "utf-8"
    return name


def charset_from_content_type(content_type: str | None) -> str | None:
    m = _CT_CHARSET.search(content_type or "")
    return normalize_label(m.group(1)) if m else None


def detect_encoding(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(codec, how) where how is header | bom | meta | detected | default."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, "bom"
    enc = charset_from_content_type(content_type)
    if enc:
        return enc, "header"
    m = _META_CHARSET.search(body[:4096])
    if m:
        enc = normalize_label(m.group(1).decode("ascii", "ignore"))
        if enc:
            return enc, "meta"
    try:
        body.decode("utf-8")
        return "utf-8", "default"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes  # noqa: PLC0415  (only for undeclared legacy pages)
    results = list(from_bytes(body[:65536]))
    if results:
        best = results[0]
        # Ties between single-byte Latin code pages are common; the web's legacy default wins them.
        for m in results:
            if m.encoding == "cp1252" and m.chaos <= best.chaos + 0.01:
                return "cp1252", "detected"
        return normalize_label(best.encoding) or "utf-8", "detected"
    return "utf-8", "default"


def decode_html(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(text, codec); never raises: undecodable bytes become U+FFFD."""
    enc, how = detect_encoding(body, content_type)
    if how == "bom":
        body = body[len(next(b for b, n in _BOMS if n == enc)):]
    try:
        return body.decode(enc, "replace"), enc
    except LookupError:
        return body.decode("utf-8", "replace"), "utf-8"


def looks_binary(body: bytes) -> bool:
    """True for bytes that are not text (images, archives, executables served as text/html)."""
    head = body[:2048]
    if not head:
        return False
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    if head.count(b"\x00") > max(2, len(head) // 100):  # a stray NUL in broken HTML is not binary
        return True
    control = len(head) - len(head.translate(None, _CONTROL))  # counted in C, not a Python loop per byte
    return control / len(head) > 0.05


_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))
