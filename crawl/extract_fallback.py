"""When the block classifier abstains, trafilatura's reading stands in.

The classifier learned what prose looks like. On a shop's category page, a link directory or a
listing of short entries, the content is lines of a few words with a price or a link each, which it
scores as navigation: it keeps a handful of words, or one block, where the page holds hundreds.
trafilatura's rules still find the list there. So when the classifier's selection is short (under
SHORT words) and trafilatura reads much more (PEER_RATIO times as many words), its main-text blocks
are added. A vote that covers nearly the whole page (PEER_SHARE of its words and at least
PEER_BLOCKS of its blocks, on a page of MIN_BLOCKS blocks or more) says nothing about where the
content is (trafilatura falls back to the whole body when it finds nothing) and is not used; a page
of one or two blocks and SHORT words or more has nothing else the vote could have kept (a Javadoc
source view is one `<pre>`); a short page the classifier reads correctly
keeps its selection unless the peer finds much more. A vote that covers nearly all the words but
leaves most blocks out did choose: on a page that is one long code listing (a source-code view, a
manual's example program) the listing is nearly all the words, the model scores such long `<pre>`
blocks low, and the vote is right.

Chosen on out-of-fold scores of the tuning part of the development pages (three seeds) and on the
news benchmark; docs/extraction-experiments.md has the table.
"""
from __future__ import annotations


SHORT = 100          # a main text under this many words is short enough to doubt ...
PEER_RATIO = 2.0     # ... when trafilatura reads at least this many times as much ...
PEER_SHARE = 0.9     # ... and not (nearly) the whole page, which says nothing about where content is:
PEER_BLOCKS = 0.5    # this share of the words in at least this share of the (non-empty) blocks,
MIN_BLOCKS = 3       # on a page of at least this many: with one or two blocks nothing else is there


def peer_fallback(blocks, keep: list[bool], votes: list[bool]) -> list[bool]:
    """`keep`, or `keep` with trafilatura's main-text blocks (`votes`) added when the classifier kept
    under SHORT words and trafilatura reads at least PEER_RATIO times as many, unless its vote is the
    whole page: PEER_SHARE of the words in PEER_BLOCKS of the non-empty blocks (a new list either way)."""
    sizes = [len(b.words) for b in blocks]
    kept = sum(n for n, f in zip(sizes, keep) if f)
    if kept >= SHORT:
        return list(keep)
    voted = sum(n for n, f in zip(sizes, votes) if f)
    if voted < PEER_RATIO * max(kept, 1) or _whole_page(sizes, votes, voted):
        return list(keep)
    return [k or v for k, v in zip(keep, votes)]


def _whole_page(sizes: list[int], votes: list[bool], voted: int) -> bool:
    """Whether the vote (`voted` of its words) is trafilatura reading the whole body: PEER_SHARE of
    the page's words in at least PEER_BLOCKS of its non-empty blocks. On a page of fewer than
    MIN_BLOCKS blocks that holds SHORT words or more (a source-code view that is one long listing)
    there is nothing besides the content for the vote to have wrongly kept; a shorter one is an app
    shell's line ("You need to enable JavaScript ...") and stays refused."""
    blocks = sum(1 for n in sizes if n)
    whole = (voted >= PEER_SHARE * sum(sizes)
             and sum(1 for n, f in zip(sizes, votes) if f and n) >= PEER_BLOCKS * blocks)
    return whole and (blocks >= MIN_BLOCKS or voted < SHORT)
