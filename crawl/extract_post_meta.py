"""A discussion's per-post metadata is dropped: the short lines trafilatura leaves out of a post.

A thread repeats one structure per post, and each carries, beside the message, a few short lines
about it: the author's name and rank, "Posts: 138", "Joined: ...", the date, "Share", "Reply", a
vote count. The classifier keeps many of them (kept because the post around them is kept, or by
propagation over repeated items), while the benchmarks' truth, and trafilatura's reading with its
comment handling, leave them out. So a kept block is dropped when it lies in a repeated item inside
a discussion (an ancestor's class or id says comment, reply, post, thread, message, answer, ...),
has fewer than MAX_WORDS words, and trafilatura does not read it as main text.

On the tuning part of the development pages (out-of-fold scores through the whole selection) this
lifted forum pages from 0.777 to 0.780 and the mean by 0.0001 (103 pages moved: 70 up, 33 down);
the same rule without the discussion condition cost listings and collections, whose items' short
lines (prices, names) are content (docs/extraction-experiments.md, round 20).
"""
from __future__ import annotations

from crawl.extract_groups import repeated_items

DROP_POST_META = True   # switchable for experiments
MAX_WORDS = 8


def drop_post_meta(blocks, keep: list[bool], votes: list[bool], items: dict | None = None) -> list[bool]:
    """`keep` without the short, unvoted blocks of repeated items inside a discussion (a new list).
    `items`: the page's repeated_items when already computed."""
    out = list(keep)
    if not DROP_POST_META:
        return out
    if items is None:
        items = repeated_items(blocks)
    for members in items.values():
        for idx in members.values():
            for i in idx:
                b = blocks[i]
                if out[i] and not votes[i] and len(b.words) < MAX_WORDS and b.ctx.talk > 0:
                    out[i] = False
    return out
