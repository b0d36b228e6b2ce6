"""Priority of a frontier URL from path heuristics, and spider-trap detection.

Higher is crawled first. Shallow, short, parameter-free paths go first; calendar archives,
pagination, session ids, sort/filter permutations and repeating path segments (the classic
spider traps) are pushed down, and URLs that look like unbounded traps are refused outright.
"""
from __future__ import annotations

import re
from collections import Counter
from urllib.parse import parse_qsl, urlsplit

_CALENDAR = re.compile(r"(/|^)(19|20)\d{2}/(0?[1-9]|1[0-2])(/|$)|[?&](date|month|year|day|calendar)=", re.I)
_PAGINATION = re.compile(r"[?&](page|p|offset|start|pg)=\d+|/page/\d+", re.I)
_SESSION = re.compile(r"[?&;](sessionid|session_id|sid|phpsessid|jsessionid)=", re.I)
_SORT = re.compile(r"[?&](sort|order|orderby|filter|view|dir)=", re.I)
MAX_PATH_SEGMENTS = 12
MAX_REPEATED_SEGMENT = 3
MAX_QUERY_PARAMS = 6
MAX_URL_CHARS = 512


def trap_reason(url: str) -> str | None:
    """A reason string when the URL looks like an unbounded trap, else None."""
    if len(url) > MAX_URL_CHARS:
        return "trap:long_url"
    parts = urlsplit(url)
    segs = [s for s in parts.path.split("/") if s]
    if len(segs) > MAX_PATH_SEGMENTS:
        return "trap:deep_path"
    if segs and Counter(segs).most_common(1)[0][1] > MAX_REPEATED_SEGMENT:
        return "trap:repeating_path"
    if len(parse_qsl(parts.query, keep_blank_values=True)) > MAX_QUERY_PARAMS:
        return "trap:many_params"
    return None


def priority(url: str, depth: int) -> float:
    """Score in about [-10, 1]: higher first. Deterministic, from the URL and link depth only."""
    parts = urlsplit(url)
    segs = [s for s in parts.path.split("/") if s]
    n_params = len(parse_qsl(parts.query, keep_blank_values=True))
    score = 1.0 - 0.5 * depth - 0.1 * len(segs) - 0.3 * n_params
    if _CALENDAR.search(url):
        score -= 3.0
    if _PAGINATION.search(url):
        score -= 1.5
    if _SESSION.search(url):
        score -= 3.0
    if _SORT.search(url):
        score -= 2.0
    return round(score, 4)
