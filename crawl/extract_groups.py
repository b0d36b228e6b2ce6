"""Repeated items: the posts of a thread, the answers to a question, the entries a wiki draws.

A page that repeats one structure (siblings with the same tag and class under one parent) holds
items of one kind. When the classifier keeps most of one such item as main content, the items like
it are main content too, so their non-link blocks are kept: a thread is not cut to its first post,
nor a wiki story to its first entry. Link-heavy groups (menus, link lists, product grids of links)
are left alone.
"""
from __future__ import annotations

ITEM_TAGS = frozenset({"article", "section", "li", "div"})
MAX_UP = 4                 # how far above a block's owner an item may start
MIN_ANCHOR_WORDS = 20      # an item counts as kept when it has this many words ...
MIN_ANCHOR_SHARE = 0.6     # ... and this share of them is kept
MAX_LINK_DENSITY = 0.3     # groups and blocks above this link density are not propagated


def item_signature(el) -> tuple[str, str] | None:
    """(tag, sorted classes) of an element that can be an item of a repeated structure, else None."""
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    if tag not in ITEM_TAGS:
        return None
    cls = " ".join(sorted((el.get("class") or "").split()))
    if not cls and tag != "article":
        return None
    return tag, cls


def item_of(owner, cache: dict) -> tuple[object, tuple] | None:
    """(item element, group key) for the nearest ancestor-or-self of `owner` that repeats among its
    siblings, or None."""
    a = owner
    for _ in range(MAX_UP + 1):
        if a is None:
            return None
        p = a.getparent()
        if p is None:
            return None
        sig = item_signature(a)
        if sig is not None:
            counts = cache.get(p)
            if counts is None:
                counts = {}
                for c in p:
                    s = item_signature(c)
                    if s is not None:
                        counts[s] = counts.get(s, 0) + 1
                cache[p] = counts   # the element itself as key (keeps its proxy alive; id() would be reused)
            if counts.get(sig, 0) >= 2:
                return a, (p, sig)
        a = p
    return None


def repeated_items(blocks) -> dict[tuple, dict[object, list[int]]]:
    """group key -> item element -> indices of the blocks inside that item (document order)."""
    cache: dict = {}
    items: dict[tuple, dict[object, list[int]]] = {}
    for i, b in enumerate(blocks):
        hit = item_of(b.el, cache)
        if hit is not None:
            el, key = hit
            items.setdefault(key, {}).setdefault(el, []).append(i)
    return items


def propagate(blocks, keep: list[bool], items: dict | None = None) -> list[bool]:
    """`keep` extended to the blocks of items like a kept one (a new list); `items`: the page's
    repeated_items when already computed."""
    if items is None:
        items = repeated_items(blocks)
    out = list(keep)
    for members in items.values():
        if len(members) < 2:
            continue
        idx = [i for m in members.values() for i in m]
        chars = sum(len(blocks[i].text) for i in idx) or 1
        if sum(blocks[i].link_chars for i in idx) / chars > MAX_LINK_DENSITY:
            continue
        anchored = False
        for m in members.values():
            words = sum(len(blocks[i].words) for i in m)
            kept = sum(len(blocks[i].words) for i in m if keep[i])
            if words >= MIN_ANCHOR_WORDS and kept >= MIN_ANCHOR_SHARE * words:
                anchored = True
                break
        if not anchored:
            continue
        for i in idx:
            b = blocks[i]
            if not out[i] and b.link_chars <= MAX_LINK_DENSITY * len(b.text):
                out[i] = True
    return out
