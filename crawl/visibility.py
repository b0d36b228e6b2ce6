"""What a visitor can see in static HTML, judged the way a browser would without running scripts.

Text inside <script>, <style>, <template>, <noscript>, <svg>, JSON stores and other non-rendered
elements, inside elements hidden by the `hidden` attribute or an inline `display:none` /
`visibility:hidden` style, and inside modal dialogs (`aria-modal="true"`), is not visible. After
rendering, the browser's own judgement (computed style) is written into the DOM as HIDDEN_ATTR and
honoured here the same way. The block extractor (crawl/extract_blocks.py) skips the same subtrees,
and `--render auto` (crawl/render_policy.py) counts only visible text, so a page whose content sits
in a hidden store drawn by script is recognised as needing a browser. Exceptions, made when the page
is parsed: a page whose whole content, title included, is hidden by one inline style is shown, as
its script would, and so is the hidden block that holds a page's only title heading (`lift_cloak`);
the collapsed panels of disclosure widgets outside navigation are one click away and shown
(`open_disclosures`).
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
    inline style with display:none / visibility:hidden, or a modal dialog (`aria-modal="true"`, as
    a closed <dialog> is). A modal is hidden until a script opens it, and once open it sits over the
    page: cookie consent, newsletter sign-up, cart and login drawers, a site's policies; what the
    visitor came for is the page beneath. An ARIA tab panel is never hidden: the inactive tabs of a
    tab set (code samples per language, product specs) are one click away.
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
    if _is_modal(el):
        return True   # a modal dialog: closed until a script opens it, and over the page when open
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


# A page never means to show nothing: when one element hidden by its inline style holds this share of
# the page's text, content structure included, a script reveals it on load (a cloak).
CLOAK_SHARE = 0.8
# ... and a page's title heading is meant to be seen: when every <h1> sits in inline-hidden elements,
# the one that holds it and this share of the text is the content a script reveals (a shop's lock app
# or a deferred product block). Pages where such an element held under 3% (a hidden title in an
# otherwise visible page) and pages where it held a third or more were both seen; a tenth sits between.
HEADING_SHARE = 0.1
MAX_CLOAKS = 4   # cloaks inside cloaks lifted at most this deep (a hostile page nests hundreds)
_CONTENT_TAGS = ("h1", "main", "article")


def _rendered_chars(el) -> int:
    """Characters of text under `el` in rendered tags (hidden or not), whitespace not counted."""
    n, stack = 0, [el]
    while stack:
        e = stack.pop()
        tag = e.tag
        if e is not el and e.tail:
            n += len(e.tail.strip())
        if not isinstance(tag, str) or tag.lower() in NOT_RENDERED:
            continue
        if e.text:
            n += len(e.text.strip())
        stack.extend(e)
    return n


def lift_cloak(doc) -> bool:
    """Show the page's content where a script would: an element hidden only by its inline style
    (display:none / visibility:hidden) that holds CLOAK_SHARE of the body's text and the page's
    content structure (an <h1>, <main> or <article>). Anti-flicker wrappers and app shells hide the
    whole page this way until their script has run (a saved copy may have lost the script); without
    the lift a static reader finds nothing at all. Short of that share, an element that holds the
    page's only <h1> and HEADING_SHARE of the text is lifted too (`_hidden_heading`): a shop's lock
    app hides the product block under a visible header and footer. A cloak inside a lifted one is
    lifted too (up to MAX_CLOAKS deep). A data store (a single-file wiki's entries) has no such
    structure and stays hidden, and so do dialogs and what a browser marked (HIDDEN_ATTR). A modal
    (aria-modal) is never a candidate: is_hidden keeps it hidden whatever its style says, so lifting
    it would show nothing and only use up a lift. Returns whether a cloak was lifted."""
    body = doc.find("body") if doc is not None and doc.tag == "html" else None
    if body is None:
        return False
    total = None
    for depth in range(MAX_CLOAKS):
        hidden = [el for el in body.xpath(".//*[@style]")  # in C: most pages have few styled elements
                  if _HIDDEN_STYLE.search(el.get("style")) and el.get("hidden") is None
                  and el.get(HIDDEN_ATTR) is None and el.tag.lower() not in NOT_RENDERED]
        marked = set(hidden)  # the outermost only: disjoint subtrees, so what follows reads each node once
        inside: dict = {}
        hidden = [el for el in hidden if not _within(el.getparent(), marked.__contains__, inside)
                  and any(next(el.iter(t), None) is not None for t in _CONTENT_TAGS) and not _is_modal(el)]
        if not hidden:
            return depth > 0
        sizes = [_rendered_chars(el) for el in hidden]
        size = max(sizes)
        el = hidden[sizes.index(size)]   # two disjoint elements cannot both hold CLOAK_SHARE of the text
        total = _rendered_chars(body) if total is None else total
        if size == 0 or size < CLOAK_SHARE * total:
            el = _hidden_heading(body, hidden, sizes, total, marked)
            if el is None:
                return depth > 0
        el.set("style", _HIDDEN_STYLE.sub("", el.get("style")))
    return True


def _is_modal(el) -> bool:
    return (el.get("aria-modal") or "").lower() == "true"


def _is_dialog(el) -> bool:
    return (el.get("role") or "").lower() in ("dialog", "alertdialog") or _is_modal(el)


def _hidden_heading(body, hidden: list, sizes: list[int], total: int, marked: set):
    """Among the outermost inline-hidden elements, the largest that holds an <h1> and HEADING_SHARE
    of the body's text, when no <h1> with text shows anywhere else; else None. A dialog (role
    dialog or aria-modal) is hidden until it is opened and stays hidden: a republication dialog
    carries its own copy of an article's title."""
    hidden_at: dict = {}

    def hides(a) -> bool:
        return a in marked or is_hidden(a)

    for h in body.iter("h1"):
        if next((t for t in h.itertext() if t.strip()), None) is None:
            continue
        if not _within(h, hides, hidden_at):
            return None    # an <h1> with text that shows
    best, best_size = None, 0
    for el, size in zip(hidden, sizes):
        if size < HEADING_SHARE * total or size <= best_size or _is_dialog(el):
            continue
        if next(el.iter("h1"), None) is not None:
            best, best_size = el, size
    return best


_NAV_TAGS = frozenset({"nav", "header"})
_NAV_ROLES = frozenset({"navigation", "menu", "menubar"})


def open_disclosures(doc) -> int:
    """Show the collapsed panels of disclosure widgets (accordions, "read more", spec sections): an
    element hidden by `hidden`, `aria-hidden="true"` or its inline style whose id a control names in
    `aria-controls` while it carries `aria-expanded`. Like an inactive tab (`is_hidden`), such a panel is one click
    away and part of the page; a product's details and a service page's FAQ answers sit in them.
    Panels in navigation (<nav>, <header>, role navigation/menu/menubar) are a site's submenus and
    stay hidden. Returns how many panels were opened."""
    body = doc.find("body") if doc is not None and doc.tag == "html" else None
    if body is None:
        return 0
    wanted = set()
    for control in body.xpath(".//*[@aria-controls and @aria-expanded]"):
        wanted.update((control.get("aria-controls") or "").split())
    if not wanted:
        return 0
    opened, nav = 0, {}
    for el in body.xpath(".//*[@id]"):
        if el.get("id") not in wanted or _within(el, _is_navigation, nav):
            continue
        style = el.get("style")
        hidden_style = bool(style) and _HIDDEN_STYLE.search(style) is not None
        aria_hidden = (el.get("aria-hidden") or "").lower() == "true"
        if el.get("hidden") is None and not hidden_style and not aria_hidden:
            continue
        el.attrib.pop("hidden", None)
        el.attrib.pop("aria-hidden", None)
        if hidden_style:
            el.set("style", _HIDDEN_STYLE.sub("", style))
        opened += 1
    return opened


def _is_navigation(el) -> bool:
    return el.tag.lower() in _NAV_TAGS or (el.get("role") or "").lower() in _NAV_ROLES


def _within(el, test, known: dict) -> bool:
    """Whether `el` or one of its ancestors passes `test`. `known` keeps the answer for every element
    walked, so asking for thousands of elements 250 levels deep walks each ancestor once, not once
    per element below it (a hostile page of 20,000 such elements took seconds)."""
    chain = []
    while el is not None and el not in known:
        if test(el):
            known[el] = True
            break
        chain.append(el)
        el = el.getparent()
    answer = known[el] if el is not None else False
    known.update(dict.fromkeys(chain, answer))
    return answer


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
