"""A run of UUIDs is not text.

Some pages carry blocks made of nothing but UUIDs. The common case is an obfuscated label: a shop
writes "Sponsored" as dozens of spans, each with a random class, most of them holding a UUID that a
page-wide style rule hides, so a visitor reads one word while the HTML holds a hundred identifier
fragments. Word-level metrics and a language model both count each fragment as a word; neither a
reader nor a model learns anything from them.

So a kept block is dropped when at least MIN_IDS UUIDs cover all but a small share of its word
characters. A block inside `<pre>` is left alone: a listing of identifiers there is what the page
shows on purpose. Other hexadecimal strings are not counted: a manual's table shows what md5('abc')
returns, a changelog its commit hashes, and those are the page's text.

Judged on the development pages (docs/extraction-experiments.md, round 34): it changed 2 tuning
pages (both up) and no held-out page.
"""
from __future__ import annotations

import re

_IDENTIFIER = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_WORD_CHAR = re.compile(r"\w")
MIN_IDS = 3             # a sentence that quotes an identifier or two ("note the UUID ...") is content
OTHER_SHARE = 0.2       # word characters outside identifiers, at most this share of the block's


def identifier_run(text: str) -> bool:
    """Whether `text` is MIN_IDS or more UUIDs with next to nothing else."""
    if len(_IDENTIFIER.findall(text)) < MIN_IDS:
        return False
    total = len(_WORD_CHAR.findall(text))
    return len(_WORD_CHAR.findall(_IDENTIFIER.sub(" ", text))) < OTHER_SHARE * total


def drop_identifier_runs(blocks, keep: list[bool]) -> list[bool]:
    """`keep` without the blocks that are runs of UUIDs (outside `<pre>`)."""
    return [k and ("pre" in b.ctx.marks or not identifier_run(b.text)) for b, k in zip(blocks, keep)]
