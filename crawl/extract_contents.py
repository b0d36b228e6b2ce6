"""A page's table of contents is navigation, not content.

Long articles, guides and manuals open with a list of their own section titles, each a link to the
section's anchor on the same page ("On this page", "Contents"). The titles come again as the
sections' headings, so the list adds nothing a reader or a language model lacks, and a training
document that carries it reads each title twice. Its entries sit inside the article, look like a
short list of the page's own words, and the block classifier keeps them with the text around.

So a kept block is dropped when it is all link text in a list item and every link in it points to a
fragment of the same page (`href="#section"`). Left alone:
- headings that link to themselves (a permalink: `<h2><a href="#usage">Usage</a></h2>`);
- tables (an API reference's member summary links each member to its details on the page, and
  that summary is the reference's text);
- `#!` and `#/` links (a single-page app's routes to other views, such as a listing's items).

Judged on the development pages (wcxb-dev) and the documentation bench's sets
(docs/extraction-experiments.md, round 32): tuning part 0.8909 to 0.8913 (48 pages up, 13 down),
held-out 0.8716 to 0.8719 (21 up, 6 down), documentation sets 0.9666 to 0.9669, aeb unchanged;
without the heading and table exceptions the documentation sets fell to 0.9657 (an mdBook's
permalinked headings, javadoc's summaries).
"""
from __future__ import annotations

from crawl.extract_blocks import BLOCK_TAGS

LINKED = 0.9            # share of the block's characters in link text: the block is the link
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def _same_page_fragment(href: str | None) -> bool:
    h = (href or "").strip()
    return len(h) > 1 and h.startswith("#") and not h.startswith(("#!", "#/"))


def _is_contents_entry(block) -> bool:
    if block.link_chars < LINKED * len(block.text):
        return False
    tags = {a.tag for a in block.ancestors()}
    if "li" not in tags or "table" in tags or tags & _HEADINGS:
        return False
    links = _own_links(block.el) or [a for a in block.ancestors() if a.tag == "a"][:1]  # or the link around it
    return bool(links) and all(_same_page_fragment(a.get("href")) for a in links)


def _own_links(el) -> list:
    """The links in `el`'s own text: its inline descendants, not those of nested blocks (a sub-list's
    entries are blocks of their own; walking into them would make a deep list quadratic)."""
    if el.tag == "a":
        return [el]
    out, stack = [], list(el)
    while stack:
        x = stack.pop()
        if x.tag == "a":
            out.append(x)
        elif isinstance(x.tag, str) and x.tag not in BLOCK_TAGS:
            stack.extend(x)
    return out


def drop_contents(blocks, keep: list[bool]) -> list[bool]:
    """`keep` without kept table-of-contents entries (a new list)."""
    return [k and not _is_contents_entry(b) for b, k in zip(blocks, keep)]
