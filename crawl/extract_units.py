"""Parts that mean nothing apart are kept together.

The classifier scores every block on its own, so it can keep one part of a unit and drop the rest:
- A `<pre>` that holds block elements (a source-code view that wraps each function in a `<div>`, a
  listing that draws every line as a `<div>` with its number) is cut into several blocks: the
  functions of a source view were kept and the imports and classes between them dropped, half a
  program. When any piece of a listing is kept, the whole listing is.
- A definition list's term is short (an acronym, a parameter's name) and scores low, while its
  definition reads as prose and is kept: a glossary came out as definitions without the words they
  define. When a definition (`<dd>`) is kept, the terms (`<dt>`) right before it are too, and when
  a term is kept, so are the definitions right after it: an API page's parameter list kept the
  parameter names and dropped what each one is (its type, a one-line description, "can be NULL").
- A code example is mostly digits and symbols, often at the end of a page, and the classifier can
  score it as low as a footer (an API page's doctest, 0.09, right after its kept "Examples"
  heading). A `<pre>` listing that trafilatura reads as main text and that follows a kept block in
  the same container is kept: an example belongs with the text that introduces it.
- A section heading is a few words, and the classifier drops many ("NAME", "Parameters"): a
  heading whose next block is kept and lies inside the heading's own container is kept with it.
"""
from __future__ import annotations

from crawl.extract_blocks import ends_sentence
from crawl.extract_layout import ancestors, tag_name

# each rule can be switched off for experiments (docs/extraction-experiments.md, round 20)
KEEP_TERMS = True
KEEP_DEFINITIONS = True
PROSE_WORDS = 4     # a definition of a kept term comes with it when one of its blocks is such a sentence
VOTED_LISTINGS = True
SECTION_HEADINGS = True
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_UP = 4             # how many levels a unit's parts may lie apart (a <dt> above its block, a listing under a container)


def listing_of(el):
    """The outermost `<pre>` at or above `el`, or None."""
    top = None
    while el is not None:
        if tag_name(el) == "pre":
            top = el
        el = el.getparent()
    return top


def _nearest(el, tag: str):
    """`el` or its ancestor within _UP levels with this tag, or None."""
    return next((a for a in ancestors(el, _UP + 1) if tag_name(a) == tag), None)


def _adjacent(el, partner: str, forward: bool) -> list:
    """The `partner` siblings ("dt" or "dd") right before or after a definition list's `el`: a term's
    definitions after it, a definition's terms before it (a term may have several), up to the next
    element of `el`'s own kind past them."""
    out = []
    sib = el.getnext() if forward else el.getprevious()
    while sib is not None and tag_name(sib) in ("dt", "dd"):
        if tag_name(sib) == partner:
            out.append(sib)
        elif out:
            break
        sib = sib.getnext() if forward else sib.getprevious()
    return out


def _keep_partners(blocks, keep: list[bool], out: list[bool], own: str, partner: str, forward: bool,
                   members: dict, accept=None) -> None:
    """For each `own` element ("dt" or "dd") holding a kept block, mark in `out` the blocks of its
    adjacent `partner` elements (`members`: element -> its block indices); with `accept`, only a
    partner one of whose blocks passes it."""
    done = set()
    for i, b in enumerate(blocks):
        if not keep[i]:
            continue
        el = _nearest(b.el, own)
        if el is None or el in done:
            continue
        done.add(el)
        for p in _adjacent(el, partner, forward):
            idx = members.get(p, ())
            if accept is None or any(accept(blocks[j]) for j in idx):
                for j in idx:
                    out[j] = True


def whole_units(blocks, keep: list[bool]) -> list[bool]:
    """`keep` with every block of a `<pre>` listing kept when one of its blocks is, the terms of a
    kept definition and the definitions of a kept term (a new list)."""
    out = list(keep)
    listings: dict[object, list[int]] = {}
    terms: dict[object, list[int]] = {}
    definitions: dict[object, list[int]] = {}
    for i, b in enumerate(blocks):
        if "pre" in b.ctx.marks:   # a block under <pre> or <code>; only <pre> groups
            top = listing_of(b.el)
            if top is not None:
                listings.setdefault(top, []).append(i)
        if KEEP_TERMS:
            dt = _nearest(b.el, "dt")
            if dt is not None:
                terms.setdefault(dt, []).append(i)
        if KEEP_DEFINITIONS:
            dd = _nearest(b.el, "dd")
            if dd is not None:
                definitions.setdefault(dd, []).append(i)
    for members in listings.values():
        if len(members) > 1 and any(keep[i] for i in members):
            for i in members:
                out[i] = True
    if terms:
        _keep_partners(blocks, keep, out, "dd", "dt", False, terms)
    if definitions:
        _keep_partners(blocks, keep, out, "dt", "dd", True, definitions, accept=_reads_as_prose)
    return out


def _reads_as_prose(block) -> bool:
    """A sentence of PROSE_WORDS words or more that is not mostly link text: what a definition holds,
    where a profile's or a footer's term/value lists hold a place, a number, a date or links."""
    return (len(block.words) >= PROSE_WORDS and ends_sentence(block.text)
            and block.link_chars < 0.5 * len(block.text))


def _below(el, container, levels: int) -> bool:
    """Whether `container` is one of the `levels` nearest ancestors of `el`."""
    return any(a is container for a in ancestors(el, levels + 1)[1:])


def _container(el):
    """The element that holds `el` beside other content: its parent, or above the wrappers that hold
    nothing else (a listing's `div.highlight` inside `div.highlight-default`)."""
    p = el.getparent()
    while p is not None and len(p) == 1 and p.getparent() is not None:
        p = p.getparent()
    return p


def voted_listings(blocks, keep: list[bool], votes: list[bool]) -> list[bool]:
    """`keep` with every `<pre>` listing kept that trafilatura reads as main text and that follows a
    kept block in the same container (its owner within _UP levels under that block's _container):
    the example after "Examples", the next example after it (a new list)."""
    out = list(keep)
    if not VOTED_LISTINGS:
        return out
    for i, b in enumerate(blocks):
        if out[i] or not votes[i] or i == 0 or "pre" not in b.ctx.marks or listing_of(b.el) is None:
            continue
        if out[i - 1] and _below(b.el, _container(blocks[i - 1].el), _UP):
            out[i] = True
    return out


def section_headings(blocks, keep: list[bool]) -> list[bool]:
    """`keep` with every heading kept whose next block is kept and lies under the heading's parent
    (within _UP levels): a section's title goes with its kept text (a new list)."""
    out = list(keep)
    if not SECTION_HEADINGS:
        return out
    for i in range(len(blocks) - 2, -1, -1):
        b = blocks[i]
        if out[i] or tag_name(b.el) not in _HEADINGS or not out[i + 1]:
            continue
        if _below(blocks[i + 1].el, b.el.getparent(), _UP + 1):
            out[i] = True
    return out
