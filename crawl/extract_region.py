"""One main region: the kept blocks that lie outside it are dropped.

A page's main content sits under one element: the article body, the thread, the documentation
page. What a block classifier keeps outside that element is nearly always a look-alike: the teasers
of related stories (a headline, a date and a paragraph of prose each), a trending list, a comment
box under a news story's sidebar. Each of them reads like content on its own; only its place in the
page gives it away. So after the block decisions, the region is the deepest element that holds at
least SHARE of the kept words and the block the classifier is surest of, and a kept block outside
it is dropped. The second condition keeps a story whose comment thread outweighs it: the region
then climbs to the element holding both. When the kept words are spread evenly (a listing, a
product page with its description and specifications in two columns) the region climbs to their
common ancestor and nothing is dropped.
"""
from __future__ import annotations

from crawl.extract_layout import ancestors

SHARE = 0.8     # the region holds at least this share of the kept words


def main_region(blocks, keep: list[bool], prob, share: float = SHARE) -> list[bool]:
    """`keep` without the kept blocks that lie outside the deepest element holding `share` of the
    kept words and the kept block of highest `prob` (a new list; unchanged when nothing is kept)."""
    chains = [ancestors(b.el) if k else None for b, k in zip(blocks, keep)]
    held: dict = {}
    total = 0
    for b, ch in zip(blocks, chains):
        if ch is None:
            continue
        w = len(b.words)
        total += w
        for a in ch:
            held[a] = held.get(a, 0) + w
    if total == 0:
        return list(keep)
    surest = max((i for i, ch in enumerate(chains) if ch is not None), key=lambda i: prob[i])
    root = next((a for a in chains[surest] if held[a] >= share * total), chains[surest][-1])
    return [ch is not None and any(a is root for a in ch) for ch in chains]
