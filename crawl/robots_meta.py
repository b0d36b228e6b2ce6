"""Page-level robots directives: `<meta name="robots">` and the `X-Robots-Tag` header.

noindex: keep no content; nofollow: follow no links; none = both. Directives aimed at our own
token (`<meta name="ciderbot">`, `X-Robots-Tag: CiderBot: noindex`) count too; ones aimed at
other crawlers do not.

Training reservations (page_signals): a page may be indexed yet reserved from AI training. The
`noai` directive (meta robots or X-Robots-Tag) and the W3C TDM Reservation Protocol (TDMRep:
the `tdm-reservation: 1` header or `<meta name="tdm-reservation" content="1">`, the
machine-readable text-and-data-mining opt-out of EU law) reserve the whole page: crawled, kept,
`training_allowed=false`. `noimageai` reserves its images only.
"""
from __future__ import annotations

import re

from crawl.identity import BOT_TOKEN

_META = re.compile(r"<meta\b[^>]*>", re.I)
_ATTR = re.compile(r"""([a-zA-Z_:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")


def _directives(value: str) -> set[str]:
    return {d.strip().lower() for d in value.split(",") if d.strip()}


def _meta_scan(html: str, user_agent: str) -> tuple[frozenset[str], bool]:
    """One pass over a page's meta tags (its first 200,000 characters) -> (the robots directives
    aimed at every crawler or at `user_agent`, whether it declares tdm-reservation 1)."""
    out: set[str] = set()
    tdm = False
    names = {"robots", user_agent.lower()}
    for m in _META.finditer(html[:200_000]):
        attrs = {a.group(1).lower(): (a.group(2) or a.group(3) or a.group(4) or "") for a in _ATTR.finditer(m.group(0))}
        name = attrs.get("name", "").strip().lower()
        if name in names:
            out |= _directives(attrs.get("content", ""))
        elif name == "tdm-reservation" and attrs.get("content", "").strip() == "1":
            tdm = True
    return frozenset(out), tdm


def header_directives(value: str | None, user_agent: str = BOT_TOKEN) -> set[str]:
    out: set[str] = set()
    if not value:
        return out
    for part in value.split("\n"):
        m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*:\s*(.*)$", part)
        if m and m.group(1).lower() not in ("noindex", "nofollow", "none", "all", "unavailable_after"):
            if m.group(1).lower() == user_agent.lower():
                out |= _directives(m.group(2))
        else:
            out |= _directives(part)
    return out


def page_signals(html: str | None, x_robots_tag: str | None, tdm_reservation: str | None,
                 user_agent: str = BOT_TOKEN) -> tuple[bool, bool, bool, bool]:
    """(noindex, nofollow, reserved from training, images reserved from training), from one pass
    over the page's meta tags."""
    meta, tdm = _meta_scan(html, user_agent) if html else (frozenset(), False)
    d = header_directives(x_robots_tag, user_agent) | meta
    reserved = "noai" in d or (tdm_reservation or "").strip() == "1" or tdm
    return ("noindex" in d or "none" in d, "nofollow" in d or "none" in d, reserved, reserved or "noimageai" in d)


def robots_flags(html: str | None, x_robots_tag: str | None, user_agent: str = BOT_TOKEN) -> tuple[bool, bool]:
    """(noindex, nofollow)."""
    return page_signals(html, x_robots_tag, None, user_agent)[:2]


def image_not_for_training(x_robots_tag: str | None, tdm_reservation: str | None, tokens: tuple[str, ...]) -> bool:
    """An image response whose headers say noindex to any of `tokens`, or noai or noimageai (to
    every crawler or to the first token), or carry `tdm-reservation: 1`: fetched, not for training."""
    first = page_signals(None, x_robots_tag, tdm_reservation, tokens[0])
    return first[0] or first[3] or any(page_signals(None, x_robots_tag, None, t)[0] for t in tokens[1:])
