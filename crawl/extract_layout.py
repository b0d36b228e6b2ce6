"""Where a block sits in the page's layout, in terms that carry from one site to another.

A site's class names say little about the next site, but the shape of a page does: the main
content lives under one element that holds most of the dense prose (and most of what trafilatura
keeps), a title <h1> opens it, and boilerplate repeats one tag/class path many times (menus, link
lists, cards). LAYOUT_FEATURES are, per block: its share of the page's words; how many blocks share
its tag/class path and their share of the words; its position relative to the first <h1>; whether
it lies inside the deepest element holding 90% of the voted words (and 80% of the dense-prose
words), how far below that element, and that element's share of the page.
"""
from __future__ import annotations

import math
from collections import defaultdict

LAYOUT_FEATURES: tuple[str, ...] = (
    "word_share", "path_log_count", "path_word_share", "rel_h1", "after_h1",
    "in_vote_root", "vote_root_depth", "vote_root_share", "in_dense_root", "dense_root_depth", "dense_root_share",
)
PATH_LEVELS = 3         # tag.class of a block's owner and its 2 nearest ancestors make its path
MAX_UP = 400            # ancestors walked per block (flattened 10,000-level pages stay cheap)
DENSE_WORDS = 15        # a block of prose: at least this many words ...
DENSE_MAX_LINKS = 0.25  # ... and at most this share of its characters in links


def tag_path(el) -> str:
    """'tag.firstclass' of `el` and its PATH_LEVELS - 1 nearest ancestors: the posts of a thread
    share one, and so do the links of a menu."""
    out = []
    a = el
    for _ in range(PATH_LEVELS):
        if a is None:
            break
        tag = a.tag if isinstance(a.tag, str) else ""
        cls = (a.get("class") or "").split()
        out.append(tag + "." + (cls[0] if cls else ""))
        a = a.getparent()
    return "/".join(out)


def tag_name(el) -> str:
    """`el`'s tag in lower case; "" for a comment or processing instruction (no string tag)."""
    return el.tag.lower() if isinstance(el.tag, str) else ""


def class_and_id(el) -> str:
    """`el`'s class and id attributes as one string, for tests of what a page names an element."""
    return f"{el.get('class') or ''} {el.get('id') or ''}"


def ancestors(el, limit: int = MAX_UP) -> list:
    """`el` and its ancestors, nearest first (at most `limit` of them)."""
    out, a = [], el
    while a is not None and len(out) < limit:
        out.append(a)
        a = a.getparent()
    return out


def _root(blocks, weights, share: float):
    """The deepest element holding at least `share` of the weighted words (None if no weight)."""
    total = sum(weights)
    if total <= 0:
        return None
    acc: dict = {}
    depth: dict = {}
    for b, w in zip(blocks, weights):
        if w <= 0:
            continue
        chain = b.ancestors()
        for k, a in enumerate(chain):
            acc[a] = acc.get(a, 0.0) + w
            depth[a] = len(chain) - k
    best, best_depth = None, -1
    for a, s in acc.items():
        if s >= share * total and depth[a] > best_depth:
            best, best_depth = a, depth[a]
    return best


def _levels_below(blocks, root) -> list[int]:
    """Per block: how many levels its owner lies below `root` (-1 outside, -2 without a root)."""
    if root is None:
        return [-2] * len(blocks)
    out = []
    for b in blocks:
        chain = b.ancestors()
        out.append(chain.index(root) if root in chain else -1)   # elements compare by identity
    return out


def layout_features(blocks, votes: list[float]) -> list[list[float]]:
    """LAYOUT_FEATURES rows for a page's blocks; votes: 1.0 where trafilatura keeps the block."""
    n = len(blocks)
    words = [len(b.words) for b in blocks]
    total = sum(words) or 1
    paths = [tag_path(b.el) for b in blocks]
    count, path_words = defaultdict(int), defaultdict(int)
    for p, w in zip(paths, words):
        count[p] += 1
        path_words[p] += w
    h1 = next((i for i, b in enumerate(blocks) if isinstance(b.el.tag, str) and b.el.tag.lower() == "h1"), None)
    vote_in = _levels_below(blocks, _root(blocks, [w * v for w, v in zip(words, votes)], 0.9))
    dense = [w if w >= DENSE_WORDS and b.link_chars <= DENSE_MAX_LINKS * len(b.text) else 0
             for b, w in zip(blocks, words)]
    dense_in = _levels_below(blocks, _root(blocks, dense, 0.8))
    vote_share = sum(w for w, d in zip(words, vote_in) if d >= 0) / total
    dense_share = sum(w for w, d in zip(words, dense_in) if d >= 0) / total

    def inside(d: int) -> float:
        return 1.0 if d >= 0 else (0.0 if d == -1 else -1.0)

    rows = []
    for i in range(n):
        rows.append([words[i] / total, math.log1p(count[paths[i]]), path_words[paths[i]] / total,
                     (i - h1) / n if h1 is not None else 0.0,
                     (1.0 if i >= h1 else 0.0) if h1 is not None else -1.0,
                     inside(vote_in[i]), min(vote_in[i], 30), vote_share,
                     inside(dense_in[i]), min(dense_in[i], 30), dense_share])
    return rows
