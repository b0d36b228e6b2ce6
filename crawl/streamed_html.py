"""Put streamed server-rendered content where the browser puts it: React's streaming SSR swaps.

React 18+ (`renderToPipeableStream`, e.g. the Next.js app router) streams a page in pieces. The
first bytes hold placeholders (`<template id="B:1">` for a Suspense boundary, `<template
id="P:5">` for a segment). The content arrives later in the same response, in `<div hidden
id="S:1">`, followed by an inline script calling `$RC("B:1","S:1")` (complete boundary; `$RR` is
the same with stylesheets) or `$RS("S:5","P:5")` (complete segment). The script moves the hidden
content into the placeholder's place, so a visitor sees it there.

A reader of the static HTML (this crawler, without rendering) would otherwise see that content
as hidden and drop it, losing whole articles. `apply_streamed_swaps` performs the same moves on the
lxml tree, in script order (a later swap can fill a placeholder that an earlier one brought in).
It executes nothing: it reads the call's two ids with a regular expression. A saved copy of a
page sometimes lacks the inline scripts; a hidden `S:n` left over is then moved into an unused
placeholder of the same number (`B:n`, else `P:n`), the pairing React gives them. A boundary's fallback
(a loading skeleton) stays beside the content: the parser drops the comments that delimit it.
"""
from __future__ import annotations

import re

_CALL = re.compile(r"\$R([CRS])\(\s*\"([BSP]:[0-9a-zA-Z]+)\"\s*,\s*\"([BSP]:[0-9a-zA-Z]+)\"")
MARKERS = (b"$RC(", b"$RS(", b"$RR(", b'id="S:', b"id='S:", b"id=S:")   # nothing to swap without these


def _append_text(node, parent, text: str | None) -> None:
    """Add `text` right after `node` (its tail), or at the start of `parent` when node is None."""
    if not text:
        return
    if node is None:
        parent.text = (parent.text or "") + text
    else:
        node.tail = (node.tail or "") + text


def _replace_with_children(target, src) -> None:
    """Put src's content (text and children) where `target` is; remove `target` (its tail stays)
    and `src` (its tail stays where src was)."""
    parent = target.getparent()     # the caller checked it has one
    idx = parent.index(target)
    prev = parent[idx - 1] if idx > 0 else None
    _append_text(prev, parent, src.text)
    src.text = None
    last = prev
    for child in list(src):
        parent.insert(idx, child)   # moves child (with its tail) out of src
        idx += 1
        last = child
    tail = target.tail
    target.tail = None
    parent.remove(target)
    _append_text(last, parent, tail)
    src.drop_tree()                 # lxml keeps src's tail in place


def _has_marker(raw: bytes) -> bool:
    """Whether `raw` holds one of MARKERS. Each contains "$R" or "S:": two scans of the page find
    most pages without any (six scans of a large page cost about 0.7 ms)."""
    return (b"$R" in raw or b"S:" in raw) and any(m in raw for m in MARKERS)


def apply_streamed_swaps(doc, raw: bytes | None = None) -> int:
    """Perform the page's React streaming swaps on `doc` in place; returns how many were done.
    `raw`: the page bytes, to skip pages without any swap call cheaply."""
    if doc is None or (raw is not None and not _has_marker(raw)):
        return 0
    calls = []
    for script in doc.iter("script"):
        if script.text and "$R" in script.text:
            calls.extend(_CALL.findall(script.text))
    by_id = {}
    for el in doc.iter():
        i = el.get("id") if isinstance(el.tag, str) else None
        if i and len(i) > 2 and i[1] == ":" and i[0] in "BSP":
            by_id.setdefault(i, el)
    # a saved page may have lost its inline scripts: a hidden S:n left over whose placeholder B:n or
    # P:n is still there takes React's own pairing (the ids share their number) after the calls
    called = {x for _, a, b in calls for x in (a, b)}
    for i, el in list(by_id.items()):
        if i[0] == "S" and i not in called and el.get("hidden") is not None:
            for target in ("B" + i[1:], "P" + i[1:]):
                if target in by_id and target not in called:
                    calls.append(("S", i, target))
                    break
    done = 0
    for kind, a, b in calls:
        content_id, target_id = (a, b) if kind == "S" else (b, a)
        src, target = by_id.pop(content_id, None), by_id.get(target_id)
        if src is None or src.getparent() is None:
            continue
        if target is None or target.getparent() is None:
            src.drop_tree()          # React removes content whose placeholder is gone
            continue
        if any(x is src for x in target.iterancestors()):
            continue                 # malformed: the placeholder sits inside its own content
        by_id.pop(target_id, None)
        _replace_with_children(target, src)
        done += 1
    return done
