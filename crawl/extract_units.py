"""Parts that mean nothing apart are kept together.

The classifier scores every block on its own, so it can keep one part of a unit and drop the rest:
- A `<pre>` that holds block elements (a source-code view that wraps each function in a `<div>`, a
  listing that draws every line as a `<div>` with its number) is cut into several blocks: the
  functions of a source view were kept and the imports and classes between them dropped, half a
  program. When any piece of a listing is kept, the whole listing is.
- A definition list's term is short (an acronym, a parameter's name) and scores low, while its
  definition reads as prose and is kept: a glossary came out as definitions without the words they
  define. When a definition (`<dd>`) is kept, the terms (`<dt>`) right before it are too.
"""
from __future__ import annotations

KEEP_TERMS = True   # the definition-list rule (switchable for experiments)
_UP = 4             # how far above a block's owner its <dt> or <dd> may be


def listing_of(el):
    """The outermost `<pre>` at or above `el`, or None."""
    top = None
    while el is not None:
        if isinstance(el.tag, str) and el.tag.lower() == "pre":
            top = el
        el = el.getparent()
    return top


def _tag(el) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def _nearest(el, tag: str):
    """`el` or its ancestor within _UP levels with this tag, or None."""
    for _ in range(_UP + 1):
        if el is None:
            return None
        if _tag(el) == tag:
            return el
        el = el.getparent()
    return None


def _terms_before(dd) -> list:
    """The `<dt>` siblings right before a `<dd>` (a term may have several)."""
    out = []
    sib = dd.getprevious()
    while sib is not None and _tag(sib) in ("dt", "dd"):
        if _tag(sib) == "dd":
            if out:
                break
        else:
            out.append(sib)
        sib = sib.getprevious()
    return out


def whole_units(blocks, keep: list[bool]) -> list[bool]:
    """`keep` with every block of a `<pre>` listing kept when one of its blocks is, and the terms of
    a kept definition (a new list)."""
    out = list(keep)
    listings: dict[object, list[int]] = {}
    terms: dict[object, list[int]] = {}
    for i, b in enumerate(blocks):
        if "pre" in b.ctx.marks:   # a block under <pre> or <code>; only <pre> groups
            top = listing_of(b.el)
            if top is not None:
                listings.setdefault(top, []).append(i)
        if KEEP_TERMS:
            dt = _nearest(b.el, "dt")
            if dt is not None:
                terms.setdefault(dt, []).append(i)
    for members in listings.values():
        if len(members) > 1 and any(keep[i] for i in members):
            for i in members:
                out[i] = True
    if terms:
        done = set()
        for i, b in enumerate(blocks):
            if not keep[i]:
                continue
            dd = _nearest(b.el, "dd")
            if dd is None or dd in done:
                continue
            done.add(dd)
            for dt in _terms_before(dd):
                for j in terms.get(dt, ()):
                    out[j] = True
    return out
