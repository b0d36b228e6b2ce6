"""A preformatted listing is kept whole or not at all.

A `<pre>` that holds block elements (a source-code view that wraps each function in a `<div>`, a
listing that draws every line as a `<div>` with its number) is cut into several blocks, and the
classifier scores each piece on its own: the functions of a source view were kept and the imports
and classes between them dropped, half a program. The pieces are one text whose lines mean nothing
apart, so when any piece of a listing is kept, the whole listing is.
"""
from __future__ import annotations


def listing_of(el):
    """The outermost `<pre>` at or above `el`, or None."""
    top = None
    while el is not None:
        if isinstance(el.tag, str) and el.tag.lower() == "pre":
            top = el
        el = el.getparent()
    return top


def whole_listings(blocks, keep: list[bool]) -> list[bool]:
    """`keep` with every block of a `<pre>` listing kept when one of its blocks is (a new list)."""
    out = list(keep)
    groups: dict[object, list[int]] = {}
    for i, b in enumerate(blocks):
        if "pre" in b.ctx.marks:   # a block under <pre> or <code>; only <pre> groups
            top = listing_of(b.el)
            if top is not None:
                groups.setdefault(top, []).append(i)
    for members in groups.values():
        if len(members) > 1 and any(keep[i] for i in members):
            for i in members:
                out[i] = True
    return out
