"""PII scrubbing: typed placeholders for emails, phones, IP addresses, card numbers, SSNs, IBANs.

Emails include addresses spelled out to fool harvesters (filters/pii_email_spelled.py).

Each detector is a regex plus a validity check, so look-alikes survive: card numbers must pass
Luhn, IBANs their mod-97 checksum, SSNs the never-issued ranges, and dotted quads are scored as
address or version string from the evidence around them (filters/pii_ipv4.py: mail header fields,
brackets, ports, product names, changelog and patch-signature shapes).
Pages where PII is dense (contact lists, leaked tables) are dropped instead of scrubbed.
"""
from __future__ import annotations

import bisect
import ipaddress
import re
from collections import Counter

from filters.base import Doc, TextFilter
from filters.pii_email_spelled import spelled_emails
from filters.pii_ipv4 import BORDERLINE, IPV4_RE, IPV4_THRESHOLD, ipv4_score
from filters.text_lines import TextLines
from filters.words import split_words

PLACEHOLDERS = {"email": "<EMAIL>", "phone": "<PHONE>", "ipv4": "<IP_ADDRESS>", "ipv6": "<IP_ADDRESS>",
                "credit_card": "<CREDIT_CARD>", "ssn": "<SSN>", "iban": "<IBAN>"}

EMAIL_RE = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.)+[A-Za-z]{2,24}\b")
# The next three open with the character they consume and test what precedes it after it (the
# same matches as a leading look-behind, "\b[A-Z]{2}..." / "(?<![\d-])\d..."): re then skips ahead
# to the next capital or digit instead of entering the look-behind at every position (2-4x faster).
IBAN_RE = re.compile(r"[A-Z](?<!\w[A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
CARD_RE = re.compile(r"\d(?<![\d-]\d)(?:[ -]?\d){12,18}(?![\d-])")
SSN_RE = re.compile(r"(\d{3})(?<![\d-]\d{3})-(\d{2})-(\d{4})(?![\d-])")
_DIGIT = re.compile(r"\d")
IPV6_RE = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
PHONE_RE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{1,4}){1,5}"
                      r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\d{3}([ .-])\d{3}\1\d{4}"
                      r"|0[1-9]\d{0,3}(?:[ .-]\d{2,4}){2,4})(?![\w])")

_DIGIT_RUN_BEFORE = re.compile(r"[0-9A-Z][ .-]$")
_DIGIT_RUN_AFTER = re.compile(r"[ .-][0-9]")


def luhn_ok(digits: str) -> bool:
    total, alt = 0, False
    for ch in reversed(digits):
        d = ord(ch) - 48
        if alt:
            d *= 2
            if d > 9:
                d -= 9
        total += d
        alt = not alt
    return total % 10 == 0


def iban_ok(s: str) -> bool:
    s = s.replace(" ", "")
    if not 15 <= len(s) <= 34:
        return False
    r = s[4:] + s[:4]
    num = "".join(str(int(c, 36)) for c in r)
    return int(num) % 97 == 1


def ssn_ok(area: str, group: str, serial: str) -> bool:
    return area not in ("000", "666") and not area.startswith("9") and group != "00" and serial != "0000"


# How card numbers are printed: unbroken, or in groups of four (the last of 1-4), or 4-6-5 / 4-6-4
# (American Express, Diners Club); one kind of separator.
_CARD_GROUPS = re.compile(r"\d{4}(?:([ -])\d{4}(?:\1\d{4}){1,2}(?:\1\d{1,4})?|([ -])\d{6}\2\d{4,5})")
# issuer prefixes (IIN) of the networks: Visa 4; Mastercard 51-55 and 2221-2720; Amex 34, 37; JCB
# 3528-3589; Diners Club 300-305, 36, 38-39; Maestro, Discover, UnionPay, RuPay: 50, 56-69
_IIN = re.compile(r"4|5[0-9]|6|3[47]|35(?:2[89]|[3-8]\d)|30[0-5]|3[689]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)")
# a digit run inside a number or a URL path: "2.5511151231257827e-17", "/web/20180410025338/"
_CARD_BEFORE = re.compile(r"(?:\d\.|/)$")
_CARD_AFTER = re.compile(r"[eE][-+]?\d|/")


def card_ok(s: str, text: str = "", start: int = 0, end: int = 0) -> bool:
    """A payment card number: 13-19 digits printed as cards are, an issuer's prefix, the Luhn
    checksum, and not the tail of a decimal number or a piece of a URL path (in `text`)."""
    d = re.sub(r"[ -]", "", s)
    if not 13 <= len(d) <= 19 or len(set(d)) < 2 or not _IIN.match(d):
        return False
    if d != s and not _CARD_GROUPS.fullmatch(s):
        return False
    if text and (_CARD_BEFORE.search(text, max(0, start - 2), start) or _CARD_AFTER.match(text, end)):
        return False
    return luhn_ok(d)


def ipv4_ok(text: str, m: re.Match) -> bool:
    """A dotted quad that reads as an address, not a version string (see filters/pii_ipv4.py)."""
    return ipv4_score(text, m) > IPV4_THRESHOLD


def ipv6_ok(s: str) -> bool:
    if "::" not in s and s.count(":") < 7:
        return False
    if not any(c.isdigit() for c in s):
        return False
    try:
        ipaddress.IPv6Address(s)
        return True
    except ValueError:
        return False


def phone_ok(s: str) -> bool:
    """International (+CC ...) 8-15 digits; NANP (555) 123-4567 / 555-123-4567; national 0xx ... 9-11 digits."""
    digits = sum(c.isdigit() for c in s)
    if s.startswith("+"):
        return 8 <= digits <= 15
    if s.startswith("0"):
        return 9 <= digits <= 11
    return digits == 10


def find_pii(text: str, stats: Counter | None = None) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, type) spans, earlier detectors win (order below). `stats`, when
    given, counts dotted quads whose address score was a close call ('ipv4_borderline')."""
    spans: list[tuple[int, int, str]] = []
    starts: list[int] = []   # sorted starts of taken spans
    ends: list[int] = []     # their ends, same order

    def add(a: int, b: int, kind: str) -> None:
        i = bisect.bisect_right(starts, a)
        if i > 0 and ends[i - 1] > a:
            return
        if i < len(starts) and starts[i] < b:
            return
        starts.insert(i, a)
        ends.insert(i, b)
        spans.append((a, b, kind))

    if "@" in text:
        for m in EMAIL_RE.finditer(text):
            add(m.start(), m.end(), "email")
    lines = TextLines(text)   # one line index for every detector (scanned only when one asks)
    for a, b in spelled_emails(text, lines):  # "jane at example dot org", pipermail's "jane at example.org"
        add(a, b, "email")
    if _DIGIT.search(text):
        for m in IBAN_RE.finditer(text):
            if iban_ok(m.group(0)):
                add(m.start(), m.end(), "iban")
        for m in CARD_RE.finditer(text):
            if card_ok(m.group(0), text, m.start(), m.end()):
                add(m.start(), m.end(), "credit_card")
        for m in SSN_RE.finditer(text):
            if ssn_ok(*m.groups()):
                add(m.start(), m.end(), "ssn")
        for m in IPV4_RE.finditer(text):
            score = ipv4_score(text, m, lines)
            if stats is not None and abs(score - IPV4_THRESHOLD) < BORDERLINE:
                stats["ipv4_borderline"] += 1
            if score > IPV4_THRESHOLD:
                add(m.start(), m.end(), "ipv4")
        if "::" in text or text.count(":") >= 7:
            for m in IPV6_RE.finditer(text):
                if ipv6_ok(m.group(0)):
                    add(m.start(), m.end(), "ipv6")
        for m in PHONE_RE.finditer(text):
            # part of a longer run of digit groups (an account number, an invalid IBAN): not a phone
            if _DIGIT_RUN_BEFORE.search(text, max(0, m.start() - 2), m.start()) or \
                    _DIGIT_RUN_AFTER.match(text, m.end()):
                continue
            if phone_ok(m.group(0)):
                add(m.start(), m.end(), "phone")
    return sorted(spans)


def scrub(text: str, types: set[str] | None = None, stats: Counter | None = None) -> tuple[str, Counter]:
    """Replace PII by typed placeholders; returns (new text, counts per type). `stats`: see find_pii."""
    counts: Counter = Counter()
    out, pos = [], 0
    for a, b, kind in find_pii(text, stats):
        if types is not None and kind not in types:
            continue
        out.append(text[pos:a])
        out.append(PLACEHOLDERS[kind])
        counts[kind] += 1
        pos = b
    if not counts:
        return text, counts
    out.append(text[pos:])
    return "".join(out), counts


class PiiScrubber(TextFilter):
    """Cleaner: scrubs PII in place; drops pages whose PII density says they aggregate personal data."""
    name = "pii"
    score_ranges = {"pii_count": (0.0, 50.0), "pii_table_count": (0.0, 50.0), "pii_density": (0.0, 0.2),
                    "pii_ipv4_borderline": (0.0, 20.0)}
    OPTIONS = {"types", "max_density", "min_count_to_drop"}

    def __init__(self, types: list[str] | None = None, max_density: float = 0.08, min_count_to_drop: int = 5):
        self.types = set(types) if types else None
        self.max_density = float(max_density)
        self.min_count_to_drop = int(min_count_to_drop)

    def clean(self, doc: Doc) -> None:
        n_words = len(doc.words)
        stats: Counter = Counter()
        text, counts = scrub(doc.text, self.types, stats)
        doc.meta["pii_counts"] = counts
        doc.meta["pii_ipv4_borderline"] = stats["ipv4_borderline"]
        # tables (a page's table cells, e.g. a people directory) count toward density, not scrubbed here
        tables = doc.meta.get("tables_text") or ""
        in_tables = [k for _, _, k in find_pii(tables) if self.types is None or k in self.types] if tables else []
        doc.meta["pii_table_count"] = len(in_tables)
        doc.meta["pii_words"] = n_words + (len(split_words(tables)) if tables else 0)
        doc.set_text(text)

    def score(self, doc: Doc) -> dict[str, float]:
        counts = doc.meta.get("pii_counts") or Counter()
        total = sum(counts.values())
        in_tables = doc.meta.get("pii_table_count", 0)
        return {"pii_count": float(total), "pii_table_count": float(in_tables),
                "pii_density": (total + in_tables) / max(doc.meta.get("pii_words", 1), 1),
                "pii_ipv4_borderline": float(doc.meta.get("pii_ipv4_borderline", 0))}

    def decide(self, s: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        if s["pii_count"] + s.get("pii_table_count", 0.0) >= self.min_count_to_drop and s["pii_density"] > self.max_density:
            return False, "pii:dense_personal_data"
        return True, None
