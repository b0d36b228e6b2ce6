"""When `--render auto` renders a page: its static HTML shows little visible text, or it looks like
a JavaScript app shell (an empty #root/#app/#__next mount point, "enable JavaScript" notices,
pages made mostly of scripts)."""
from __future__ import annotations

import re

MIN_VISIBLE_CHARS = 200
_STRIP = re.compile(r"<(script|style|noscript|template|svg)\b[^>]*>.*?</\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]+>")
_WS = re.compile(r"\s+")
_SHELL = re.compile(r"""<div[^>]+id=["'](root|app|__next|__nuxt|main-app|svelte)["'][^>]*>\s*</div>""", re.I)
_NOSCRIPT = re.compile(r"<noscript[^>]*>[^<]*(enable|requires?|turn on)\s+javascript", re.I)
_SCRIPT = re.compile(r"<script\b", re.I)


def visible_text_chars(html: str) -> int:
    body = html[:2_000_000]
    body = _STRIP.sub(" ", body)
    return len(_WS.sub(" ", _TAG.sub(" ", body)).strip())


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
    if visible_text_chars(html) < MIN_VISIBLE_CHARS and _SCRIPT.search(html):
        return "little_text"
    return None
