"""When `--render auto` renders a page, judged on what a visitor of the static HTML would see.

Visible text is counted the way crawl/visibility.py defines it: text in <script>, <template>,
JSON stores and elements hidden by `hidden` or an inline display:none / visibility:hidden style does
not count (a single-file JavaScript wiki keeps its whole content in such a hidden store and draws it
by script). A page is rendered when it looks like an app shell (an empty #root/#app/#__next mount
point, an "enable JavaScript" notice), when it shows little visible text and has scripts, or when
scripts dominate: text held in scripts and hidden elements outweighs the visible text many times.
"""
from __future__ import annotations

import re

MIN_VISIBLE_CHARS = 200
DOMINATE_RATIO = 10            # concealed (script-held or hidden) text at least this many times the visible
DOMINATE_MAX_VISIBLE = 3000    # ... on a page that shows less than this many visible characters
_SHELL = re.compile(r"""<div[^>]+id=["'](root|app|__next|__nuxt|main-app|svelte)["'][^>]*>\s*</div>""", re.I)
_NOSCRIPT = re.compile(r"<noscript[^>]*>[^<]*(enable|requires?|turn on)\s+javascript", re.I)
_SCRIPT = re.compile(r"<script\b", re.I)


def text_budget(html: str) -> tuple[int, int]:
    """(visible characters, concealed characters: script-held or in hidden elements) of a static page."""
    from crawl.extract import parse_html  # noqa: PLC0415
    from crawl.visibility import visibility_counts  # noqa: PLC0415
    return visibility_counts(parse_html(html))



def render_reason(html: str | None, mode: str = "auto") -> str | None:
    """Why to render (a short tag for the log), or None to keep the static HTML."""
    if mode == "never" or html is None:
        return None
    if mode == "always":
        return "always"
    if _SHELL.search(html):
        return "app_shell"
    if _NOSCRIPT.search(html):
        return "noscript_notice"
    if not _SCRIPT.search(html):
        return None            # nothing could draw more than the static page shows
    visible, concealed = text_budget(html)
    if visible < MIN_VISIBLE_CHARS:
        return "little_text"
    if visible < DOMINATE_MAX_VISIBLE and concealed >= DOMINATE_RATIO * visible:
        return "scripts_dominate"
    return None
