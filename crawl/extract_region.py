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

Teasers do not vote on where the region is. A news page often carries more teaser words than story
words (a "more stories" rail of thirty headlines with a paragraph each), and then the share alone
would climb past the story to the whole page. A teaser is an item of a repeated structure (the
items crawl/extract_groups.py finds) that opens with a headline link: a block of at least
TEASER_HEAD_WORDS words, mostly link text. Its words count for nothing in the share unless the
surest block is itself in such an item, as on a listing page, where the items are the content.

The region is the content's container, not one of its sections. On a long reference page (a
manual page, an API reference, a wiki article) one section can hold 80% of the kept words by
itself: the region would stop at that section and drop the others, up to a fifth of the page. So a
region that is one of a run of like siblings (same tag and classes, as repeated items are found in
crawl/extract_groups.py, or bare <section>s) climbs to their parent while a like sibling holds kept
blocks that are not teasers. A sidebar or a rail of teasers is not a sibling section of the
content: it has its own classes, or its words are teasers'. A <details> element is a section too
(its <summary> the heading, the rest the body), and a region that is the body of one starts the
climb from it: rustdoc writes each trait implementation of a type as one, and an Iterator's
seventy methods outweighed the type's description, signature and other implementations.

A page that declares itself an article (crawl/page_kind.py) gets one more pass: the region is found
again from the sure blocks only (article_region), so teasers that the repeated-item test misses
(items with their own modifier classes, a ticker, a "more stories" list) cannot move it either.
"""
from __future__ import annotations

from crawl.extract_blocks import ends_sentence
from crawl.extract_groups import item_signature, repeated_items
from crawl.extract_layout import tag_name

SHARE = 0.8                 # the region holds at least this share of the kept words
NAV_LINK_SHARE = 0.9        # a block in a navigation landmark with this share of link text is a nav link,
                            # unless it ends as a sentence does (extract_blocks.ends_sentence)
TEASER_HEAD_WORDS = 4       # a headline, not a user name or a "View details" button ...
TEASER_HEAD_LINKS = 0.8     # ... that is mostly link text


def teasers(blocks, items: dict | None = None) -> list[bool]:
    """Per block: whether it lies in a repeated item whose first block is a headline link; `items`:
    the page's repeated_items when already computed."""
    if items is None:
        items = repeated_items(blocks)
    out = [False] * len(blocks)
    for members in items.values():
        for idx in members.values():
            head = blocks[idx[0]]
            if len(head.words) >= TEASER_HEAD_WORDS and head.link_chars >= TEASER_HEAD_LINKS * len(head.text):
                for i in idx:
                    out[i] = True
    return out


def nav_links(blocks) -> list[bool]:
    """Per block: whether it is a navigation link, a block inside a navigation landmark (<nav>, a
    navigation or menu role) whose text is nearly all link text and is a label, not a sentence (a
    card that links a whole paragraph of prose is content that happens to be a link)."""
    return [bool(b.text) and "nav" in b.ctx.marks and b.link_chars >= NAV_LINK_SHARE * len(b.text)
            and not ends_sentence(b.text) for b in blocks]


def navigation_takeover(blocks, keep: list[bool]) -> list[bool]:
    """`keep` without its navigation links (nav_links) where they hold most of the kept words and
    the rest holds some text. A documentation site's sidebar can list every page of the manual,
    thousands of one-line links; the classifier scores such links near its cut, and a few thousand
    of them outweigh a short reference page, so the main region became the sidebar. Where the
    links are a minority of the kept words (a menu item that names the page), they stay."""
    nav = nav_links(blocks)
    nav_words = sum(len(b.words) for b, k, n in zip(blocks, keep, nav) if k and n)
    rest = sum(len(b.words) for b, k, n in zip(blocks, keep, nav) if k and not n)
    if nav_words <= rest or rest < MIN_REST_WORDS:
        return list(keep)
    return [k and not n for k, n in zip(keep, nav)]


MIN_REST_WORDS = 5   # as crawl/extract.py's MIN_WORDS: less is no main content


def main_region(blocks, keep: list[bool], prob, share: float = SHARE, items: dict | None = None) -> list[bool]:
    """`keep` without the kept blocks that lie outside the deepest element holding `share` of the
    kept words (teasers' words not counted, see above) and the kept block of highest `prob` (a new
    list; unchanged when nothing is kept). `items`: the page's repeated_items when already computed."""
    teaser = teasers(blocks, items)
    root = region_root(blocks, keep, prob, share, teaser=teaser)
    root = whole_sections(blocks, keep, teaser, root)
    if CLIMB_OUT_OF_LISTS:
        root = out_of_lists(blocks, keep, teaser, root)
    return _under(blocks, keep, root)


CLIMB_OUT_OF_LISTS = True
LIST_TAGS = frozenset({"dl", "dd", "dt", "table", "tbody", "thead", "tfoot"})   # lists of terms, tables


def out_of_lists(blocks, keep: list[bool], teaser: list[bool], root):
    """`root`, or its nearest ancestor that is not a definition list (or one of its terms or
    definitions) or a table, where that ancestor holds a kept block (not a teaser) outside `root`.
    A list is a part of a page's content, not its container: on an API reference the parameter list
    can hold 80% of the kept words, and the function's description and examples beside it, and the
    page's title above, fell outside the region. Lists of items (ul, ol) are left alone: a shop's
    product grid is one, beside kept filters and banners (docs/extraction-experiments.md, round 19).
    A table's body climbs to its table first (its head is part of it). When the first ancestor past
    the list holds nothing else kept, it only wraps the list (DocBook's `div.table-contents` and
    `div.table` around a table): the region climbs through up to LIST_WRAPPERS such elements to the
    first that holds a kept block beside them, the section with its title and introduction (round 20)."""
    if root is not None and tag_name(root) in TABLE_PARTS:
        table = root.getparent()    # a table's body is not a region apart from its head
        root = table if table is not None else root
    top = root
    while top is not None and tag_name(top) in LIST_TAGS:
        top = top.getparent()
    if top is None or top is root:
        return root
    outside = [chain for chain in (b.ancestors() for b, k, t in zip(blocks, keep, teaser) if k and not t)
               if not any(a is root for a in chain)]

    def holds_more(el, inner) -> bool:   # a kept block under `el` and outside `inner`
        return any(any(a is el for a in chain) and not any(a is inner for a in chain) for chain in outside)

    if holds_more(top, root):
        return top
    for _ in range(LIST_WRAPPERS):  # elements that wrap the list and hold nothing else kept
        parent = top.getparent()
        if parent is None:
            break
        if holds_more(parent, top):
            return parent
        top = parent
    return root


TABLE_PARTS = frozenset({"tbody", "thead", "tfoot"})
LIST_WRAPPERS = 3


def _section_signature(el):
    """What makes siblings sections of one kind: the repeated-item signature, a bare <section>, or
    a <details> (a collapsible section) of the same classes."""
    sig = item_signature(el)
    tag = tag_name(el)
    if sig is None and tag == "section":
        return ("section", "")
    if sig is None and tag == "details":
        return ("details", " ".join(sorted((el.get("class") or "").split())))
    return sig


def _section_of(el):
    """`el`, or the <details> whose body it is: a collapsible section is its <summary> (the
    heading) and the rest (the body), so a region that is the body of one is that section."""
    parent = el.getparent()
    if (parent is not None and tag_name(parent) == "details"
            and tag_name(el) != "summary"):
        return parent
    return el


def whole_sections(blocks, keep: list[bool], teaser: list[bool], root):
    """`root`, or the ancestor it climbs to while it (or the <details> whose body it is) is one of
    like sibling sections (see above) and a like sibling holds a kept block that is not a teaser."""
    if root is None:
        return None
    holders = None    # elements holding a kept non-teaser block; walked only for a region that is a section
    section = top = _section_of(root)
    while (parent := top.getparent()) is not None:
        sig = _section_signature(top)
        if sig is None:
            break
        if holders is None:
            holders = {a for b, k, t in zip(blocks, keep, teaser) if k and not t for a in b.ancestors()}
        if not any(c is not top and c in holders and _section_signature(c) == sig for c in parent):
            break
        top = parent
    return root if top is section else top   # no climb: the region as it was


def region_root(blocks, keep: list[bool], prob, share: float = SHARE, items: dict | None = None,
                teaser: list[bool] | None = None):
    """The main region's element for the kept blocks (see main_region), or None when nothing is kept.
    `teaser`: the page's teasers() when already computed."""
    kept = [i for i, k in enumerate(keep) if k]
    if not kept:
        return None
    surest = max(kept, key=lambda i: prob[i])
    if teaser is None:
        teaser = teasers(blocks, items)
    discount = not teaser[surest]   # on a listing the items are the content and keep their weight
    held: dict = {}
    total = 0
    for i in kept:
        w = 0 if discount and teaser[i] else len(blocks[i].words)
        total += w
        for a in blocks[i].ancestors():
            held[a] = held.get(a, 0) + w
    chain = blocks[surest].ancestors()
    return next((a for a in chain if held[a] >= share * total), chain[-1])


def _under(blocks, keep: list[bool], root) -> list[bool]:
    """`keep` with only the kept blocks under `root` (a new list; unchanged when root is None)."""
    if root is None:
        return list(keep)
    return [k and any(a is root for a in b.ancestors()) for b, k in zip(blocks, keep)]


SURE = 0.95   # a block the classifier is this sure of anchors an article's region on its own


def article_region(blocks, keep: list[bool], prob, voted: list[bool], items: dict | None = None) -> list[bool]:
    """On a page that declares itself an article (crawl/page_kind.py): the main region found from the
    kept blocks that are sure, those trafilatura also reads as the main text (`voted`) or that score
    at least SURE, and every kept block outside it dropped. Teasers of other stories are rarely
    either, yet on a news page their headlines and blurbs score like prose and, spread around the
    story, pull the plain main region up to the whole page. A story split over two containers stays
    whole: its paragraphs are sure even where trafilatura reads only the first part."""
    anchors = [k and (v or p >= SURE) for k, v, p in zip(keep, voted, prob)]
    return _under(blocks, keep, region_root(blocks, anchors, prob, items=items))
