"""On a product page, the customer reviews are not the main content.

A shop's product page is the product: its name, description, specifications and price. Under them
it shows what buyers wrote (ratings, review texts, "was this helpful"), often more words than the
description, and each review reads to the block classifier like a paragraph of content; it also
repeats, so the repeated-item rule (crawl/extract_groups.py) keeps them all once one is kept. The
development pages' truth leaves reviews out, as it leaves out a news story's comments. So on a page
that declares one product (crawl/page_kind.py `page_kind`), kept blocks under an element whose
class or id names reviews or testimonials are dropped, unless that would drop every kept block.
Chosen on the tuning part of the development pages (out-of-fold scores: product pages 0.562 to
0.585, 13 pages up, 1 down) and checked once on the held-out part (0.561 to 0.581, 6 up, 1 down);
docs/extraction-experiments.md, round 17.
"""
from __future__ import annotations

import re

from crawl.extract_layout import class_and_id

REVIEW = re.compile(r"(?<!p)review|testimonial", re.IGNORECASE)   # "preview" is not a review


def _in_review(block) -> bool:
    return any(REVIEW.search(class_and_id(a)) for a in block.ancestors())


def drop_reviews(blocks, keep: list[bool]) -> list[bool]:
    """`keep` without the kept blocks inside a review or testimonial element, or `keep` itself when
    nothing would be left (a new list either way)."""
    out = [k and not _in_review(b) for b, k in zip(blocks, keep)]
    return out if any(out) else list(keep)
