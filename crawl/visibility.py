"""What a visitor can see in static HTML, judged the way a browser would without running scripts.

Text inside <script>, <style>, <template>, <noscript>, <svg>, JSON stores and other non-rendered
elements, and inside elements hidden by the `hidden` attribute or an inline `display:none` /
`visibility:hidden` style, is not visible. After rendering, the browser's own judgement (computed
style) is written into the DOM as HIDDEN_ATTR and honoured here the same way. The block extractor
(crawl/extract_blocks.py) skips the same subtrees, and `--render auto` (crawl/render_policy.py)
counts only visible text, so a page whose content sits in a hidden store drawn by script is
recognised as needing a browser.
"""
from __future__ import annotations

import re

# elements whose content is never drawn as text
NOT_RENDERED = frozenset({"script", "style", "template", "noscript", "svg", "math", "head", "title", "meta", "link",
                          "iframe", "object", "embed", "canvas", "video", "audio", "source", "track", "map",
                          "select", "option", "datalist", "textarea", "input", "button", "dialog"})
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
_WS = re.compile(r"\s+")
HIDDEN_ATTR = "data-cidermill-hidden"   # set by crawl/render.py on elements the browser did not draw


def is_hidden(el, noscript_visible: bool = False) -> bool:
    """True when this element (and so its subtree) is not drawn: not a rendered tag, `hidden`, or an
    inline style with display:none / visibility:hidden. An ARIA tab panel never is: the inactive
    tabs of a tab set (code samples per language, product specs) are one click away.
    `noscript_visible`: read <noscript> as a reader without JavaScript (a crawler reading static
    HTML) sees it; forum software such as Discourse serves its whole thread there. A browser with
    scripts hides it (and render.py marks it)."""
    tag = el.tag
    if not isinstance(tag, str):
        return True  # comments, processing instructions
    tag = tag.lower()
    if tag in NOT_RENDERED:
        if tag == "button":
            return not _swallowed_by_button(el)
        return not (noscript_visible and tag == "noscript")
    if (el.get("role") or "").lower() == "tabpanel":
        return False  # an inactive tab (ARIA tabs pattern) is one click away: content, not hidden
    if el.get("hidden") is not None or el.get(HIDDEN_ATTR) is not None:
        return True
    if (el.get("aria-hidden") or "").lower() == "true" and tag in ("div", "section", "aside"):
        return True
    style = el.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style) is not None


def _swallowed_by_button(el) -> bool:
    """True when this <button> holds another <button>: no HTML5 parser builds that (a <button> start
    tag closes an open one), but libxml2 does when a button's inner markup is unbalanced
    (`<button><div></button>`): it ignores the `</button>` and the button swallows the rest of the
    page. A browser shows that rest, so it is not a label to hide; the inner buttons still are."""
    return next(el.iterdescendants("button", "BUTTON"), None) is not None


def visible_text(doc, limit: int = 2_000_000) -> str:
    """The page's visible text (whitespace collapsed, at most `limit` characters), walked without
    recursion so arbitrarily deep markup is safe."""
    if doc is None:
        return ""
    body = doc.find("body") if doc.tag == "html" else doc
    if body is None:
        body = doc
    parts: list[str] = []
    n = 0
    stack = [(body, False)]
    while stack and n < limit:
        el, done = stack.pop()
        if done:
            if el.tail and el is not body:
                parts.append(el.tail)
                n += len(el.tail)
            continue
        if is_hidden(el):
            if el.tail and el is not body:
                parts.append(el.tail)
                n += len(el.tail)
            continue
        if el.text:
            parts.append(el.text)
            n += len(el.text)
        stack.append((el, True))
        stack.extend((c, False) for c in reversed(el))
    return _WS.sub(" ", " ".join(parts)).strip()[:limit]


def visibility_counts(doc) -> tuple[int, int]:
    """(visible characters, concealed characters) of a document: concealed is the text of scripts,
    templates, JSON stores and hidden elements. Whitespace runs count as one character."""
    if doc is None:
        return 0, 0
    visible = len(visible_text(doc))
    concealed = 0
    body = doc.find("body") if doc.tag == "html" else doc
    roots = [doc.find("head"), body if body is not None else doc]
    stack = [r for r in roots if r is not None]
    while stack:
        el = stack.pop()
        if is_hidden(el):
            if isinstance(el.tag, str):
                concealed += len(_WS.sub(" ", el.text_content() or ""))
            continue
        stack.extend(el)
    return visible, concealed


def drop_hidden(doc) -> int:
    """Remove hidden subtrees from `doc` in place (their tails stay); returns how many were removed.
    Used on the copy a peer extractor reads, so it neither votes for hidden text nor spends time on it."""
    if doc is None:
        return 0
    body = doc.find("body") if doc.tag == "html" else doc
    if body is None:
        return 0
    hidden = []
    stack = list(body)
    while stack:
        el = stack.pop()
        if is_hidden(el, noscript_visible=True):
            if isinstance(el.tag, str) and el.tag.lower() not in ("script", "style"):
                hidden.append(el)
            continue
        stack.extend(el)
    for el in hidden:
        el.drop_tree()
    return len(hidden)
