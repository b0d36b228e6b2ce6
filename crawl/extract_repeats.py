"""Text a page carries twice is emitted once: quoted posts and copied sections are left out.

Three kinds of repetition are not content of their own:
- **a quote of a post above it**: a forum reply quoting an earlier message repeats it word for
  word inside a `<blockquote>` (or an element whose class or id says quote);
- **a copied section**: a responsive layout's second copy of an article (one shown on phones, one
  on desktops, told apart only by CSS), a product description rendered twice, a carousel's clones.
  Static HTML does not say which copy a visitor sees;
- **a caption shown again**: a news gallery writes each photo's caption in its slide and again in
  the viewer's caption bar.

A training document wants none of them (the text stage's repetition filters count repeated
paragraphs against the whole document). So a kept block of at least MIN_WORDS words whose words
equal an earlier kept block's is dropped when it is quoted, when it is a caption of CAPTION_WORDS
words or more (under an element whose class or id says caption), or when it is part of a copied
run: at least RUN_BLOCKS consecutive kept blocks that each repeat the block the same distance back,
RUN_WORDS words or more in all. A copied section goes too: an element whose whole sequence of
blocks (two or more) repeats, block for block, an earlier element's that it does not overlap, where
that sequence holds SECTION_WORDS words and SECTION_SHARE of the kept words or more. A shop's
description rendered twice is a short run broken by its short lines ("Handmade stoneware.",
"Volume: approx. 350ml"), which the run test cannot join, but its container repeats whole. Other
repeats stay: an API reference repeats a method's summary line in its details and a parameter's
entry in the object it returns, a tabbed code sample repeats its comments per language, a page
repeats a caption under every webcam (short, or not marked as a caption), and those are the page's
text each time (a parameter's entry is a small part of its page, which SECTION_SHARE leaves alone).

Judged on the development pages (wcxb-dev, the extractor's whole selection, shipped model) and the
documentation bench's sets (docs/extraction-experiments.md, round 24): dropping every repeat of 5+
words lifted the tuning part by 0.0049 but cost the documentation sets 0.0068; this rule lifts the
tuning part by 0.0028 and costs them 0.0001, and on the held-out part, checked once with the rule
fixed, 0.8586 to 0.8608 with no page type down. Copied sections (round 27): tuning part 0.8877 to
0.8892, 28 pages up and none down on wcxb-dev and aeb, documentation sets 0.9665 to 0.9667.
Captions shown again (round 31): aeb 0.9527 to 0.9550 (7 news pages up), tuning 2 pages up,
held-out 2 up, none down; no documentation page's text changed.
"""
from __future__ import annotations

from crawl.extract_layout import class_and_id

REPEATS = True    # switchable for experiments
MIN_WORDS = 5     # shorter lines ("Reply", "Add to cart", a price) repeat by nature
RUN_BLOCKS = 2
RUN_WORDS = 100
SECTION_WORDS = 20     # a copied section holds at least this many words ...
SECTION_SHARE = 0.1    # ... and this share of the page's kept words
CAPTION_WORDS = 10     # a repeated caption this long is the same caption shown again


def _within_marked(block, tag: str, word: str) -> bool:
    """Whether the block sits in a `tag` element or one whose class or id holds `word`."""
    return any(a.tag == tag or word in class_and_id(a).lower() for a in block.ancestors())


def _quoted(block) -> bool:
    return _within_marked(block, "blockquote", "quote")


def _caption_copy(block) -> bool:
    """A photo caption shown again: a gallery writes each caption in its slide and once more in the
    viewer's caption bar (or in a full and a folded variant). Shorter captions ("Read my review of
    this property here.") are a page's own line under each of several pictures, so they stay."""
    return len(block.words) >= CAPTION_WORDS and _within_marked(block, "figcaption", "caption")


def _copied_runs(blocks, kept: list[int], earlier: dict[int, int]) -> set[int]:
    """Kept blocks in runs of consecutive kept blocks that repeat at one distance back, long enough."""
    out: set[int] = set()
    run: list[int] = []

    def close():
        if len(run) >= RUN_BLOCKS and sum(len(blocks[i].words) for i in run) >= RUN_WORDS:
            out.update(run)

    for i in kept:   # a run, when there is one, always ends at the previous kept block
        j = earlier.get(i)
        if j is not None and run and i - j == run[-1] - earlier[run[-1]]:
            run.append(i)
        else:
            close()
            run = [i] if j is not None else []
    close()
    return out


def drop_repeated(blocks, keep: list[bool]) -> list[bool]:
    """`keep` without quoted repeats and copied runs of earlier kept blocks (a new list)."""
    out = list(keep)
    if not REPEATS:
        return out
    kept = [i for i, k in enumerate(keep) if k]
    first: dict[str, int] = {}
    earlier: dict[int, int] = {}   # kept block -> the earlier kept block with the same words
    for i in kept:
        b = blocks[i]
        if len(b.words) < MIN_WORDS:
            continue
        if b.norm in first:
            earlier[i] = first[b.norm]
        else:
            first[b.norm] = i
    if earlier:
        copies = {i for i in earlier if _quoted(blocks[i]) or _caption_copy(blocks[i])}
        for i in _copied_runs(blocks, kept, earlier) | copies:
            out[i] = False
    for i in _copied_sections(blocks, keep):
        out[i] = False
    return out


def _copied_sections(blocks, keep: list[bool]) -> set[int]:
    """Kept blocks under an element whose whole block sequence (RUN_BLOCKS or more blocks) repeats an
    earlier, disjoint element's block for block, with SECTION_WORDS words and SECTION_SHARE of the
    kept words or more. An element's blocks are a contiguous range of the page's blocks, so ranges,
    word counts and kept counts come from prefix sums; only large enough ranges are compared."""
    n = len(blocks)
    words = [0] * (n + 1)
    kept = [0] * (n + 1)
    for i, b in enumerate(blocks):
        words[i + 1] = words[i] + len(b.words)
        kept[i + 1] = kept[i] + (len(b.words) if keep[i] else 0)
    floor = max(SECTION_WORDS, SECTION_SHARE * kept[n])
    span: dict = {}                     # element -> [first block, last block]
    for i, b in enumerate(blocks):
        for a in b.ancestors():
            s = span.get(a)
            if s is None:
                span[a] = [i, i]
            else:
                s[1] = i
    seen: dict = {}                     # block sequence -> last block of its first element
    out: set[int] = set()
    for lo, hi in sorted({(lo, hi) for lo, hi in span.values()}, key=lambda r: (r[0], -r[1])):
        if hi - lo + 1 < RUN_BLOCKS or words[hi + 1] - words[lo] < floor or kept[hi + 1] == kept[lo]:
            continue
        key = tuple(blocks[i].norm for i in range(lo, hi + 1))
        end = seen.get(key)
        if end is None:
            seen[key] = hi
        elif lo > end:
            out.update(i for i in range(lo, hi + 1) if keep[i])
    return out
