"""Page-level robots directives: `<meta name="robots">` and the `X-Robots-Tag` header.

noindex: keep no content; nofollow: follow no links; none = both. Directives aimed at our own
token (`<meta name="ciderbot">`, `X-Robots-Tag: CiderBot: noindex`) count too; ones aimed at
other crawlers do not.

Training reservations (page_signals): a page may be indexed yet reserved from AI training. The
`noai` directive (meta robots or X-Robots-Tag) and the W3C TDM Reservation Protocol (TDMRep:
the `tdm-reservation: 1` header or `<meta name="tdm-reservation" content="1">`, the
machine-readable text-and-data-mining opt-out of EU law) reserve the whole page: crawled, kept,
`training_allowed=false`. `noimageai` reserves its images only. The site's TDMRep file
(crawl/tdmrep.py) gives a page its default reservation; the page's own header or meta, 0 or 1,
supersedes it, as TDMRep orders them (where the header and the meta disagree, a 1 in either wins).
"""
from __future__ import annotations

import re

from crawl.identity import BOT_TOKEN

_META = re.compile(r"<meta\b[^>]*>", re.I)
_ATTR = re.compile(r"""([a-zA-Z_:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")


def _directives(value: str) -> set[str]:
    return {d.strip().lower() for d in value.split(",") if d.strip()}


def tdm_value(value: str | None) -> int | None:
    """A declared tdm-reservation: 0 or 1; anything else is unset (TDMRep: a protocol error)."""
    v = (value or "").strip()
    return int(v) if v in ("0", "1") else None


def _meta_scan(html: str, user_agent: str) -> tuple[frozenset[str], int | None]:
    """One pass over a page's meta tags (its first 200,000 characters) -> (the robots directives
    aimed at every crawler or at `user_agent`, its tdm-reservation: 1 if any meta says 1, else 0
    if one says 0, else None)."""
    out: set[str] = set()
    tdm: int | None = None
    names = {"robots", user_agent.lower()}
    for m in _META.finditer(html[:200_000]):
        attrs = {a.group(1).lower(): (a.group(2) or a.group(3) or a.group(4) or "") for a in _ATTR.finditer(m.group(0))}
        name = attrs.get("name", "").strip().lower()
        if name in names:
            out |= _directives(attrs.get("content", ""))
        elif name == "tdm-reservation":
            v = tdm_value(attrs.get("content"))
            tdm = v if tdm is None or v == 1 else tdm
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
                 user_agent: str = BOT_TOKEN, site_tdm: int | None = None) -> tuple[bool, bool, bool, bool]:
    """(noindex, nofollow, reserved from training, images reserved from training), from one pass
    over the page's meta tags. `site_tdm`: the site's TDMRep file's value for this URL (0, 1 or
    None), which the page's own header or meta supersedes."""
    meta, meta_tdm = _meta_scan(html, user_agent) if html else (frozenset(), None)
    d = header_directives(x_robots_tag, user_agent) | meta
    declared = [v for v in (tdm_value(tdm_reservation), meta_tdm) if v is not None]
    tdm = 1 in declared if declared else site_tdm == 1
    reserved = "noai" in d or tdm
    return ("noindex" in d or "none" in d, "nofollow" in d or "none" in d, reserved, reserved or "noimageai" in d)


def robots_flags(html: str | None, x_robots_tag: str | None, user_agent: str = BOT_TOKEN) -> tuple[bool, bool]:
    """(noindex, nofollow)."""
    return page_signals(html, x_robots_tag, None, user_agent)[:2]


def image_not_for_training(x_robots_tag: str | None, tdm_reservation: str | None, tokens: tuple[str, ...],
                           site_tdm: int | None = None) -> bool:
    """An image response whose headers say noindex to any of `tokens`, or noai or noimageai (to
    every crawler or to the first token), or carry `tdm-reservation: 1` (or none, where the site's
    TDMRep file says 1 for it): fetched, not for training."""
    first = page_signals(None, x_robots_tag, tdm_reservation, tokens[0], site_tdm)
    return first[0] or first[3] or any(page_signals(None, x_robots_tag, None, t)[0] for t in tokens[1:])
