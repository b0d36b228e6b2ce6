"""jusText's context-sensitive pass in linear time, with the same result.

trafilatura's full vote (its fallbacks) runs jusText's `revise_paragraph_classification`. For every
short or near-good paragraph it walks left and right to the nearest good or bad one, so a run of n
short paragraphs costs n^2 steps: a page of 16,000 one-cell tables took 25 CPU-s in extraction and
32,000 about 100. Here the nearest classes on each side come from one pass each way, taken from the
same class values the upstream walk would read at that moment (the short paragraphs are
reclassified together after the pass; the near-good ones one by one, left to right). The heading
steps are upstream's, unchanged. `install()` puts this function where trafilatura and jusText call
it; tests/crawl/test_justext_linear.py checks it against the original on random pages.
"""
from __future__ import annotations

from justext.core import MAX_HEADING_DISTANCE_DEFAULT
from justext.core import revise_paragraph_classification as upstream_revise  # noqa: F401  (the reference, kept before install() replaces it)

GOOD_OR_BAD = ("good", "bad")


def _nearest(classes: list[str], take: tuple[str, ...], order: range) -> list[str]:
    """For each index in `order`, the class of the nearest earlier index (in that order) whose class
    is in `take`, or "bad" when there is none (jusText's page boundary)."""
    out = [""] * len(classes)
    last = "bad"
    for i in order:
        out[i] = last
        if classes[i] in take:
            last = classes[i]
    return out


def _headings(paragraphs, max_heading_distance: int, copy: bool) -> None:
    """Upstream's two heading steps: a short heading before good text within the distance becomes
    near-good (first step, which also copies the context-free class); a heading demoted to bad
    becomes good (last step)."""
    for i, paragraph in enumerate(paragraphs):
        if copy:
            paragraph.class_type = paragraph.cf_class
            if not (paragraph.heading and paragraph.class_type == "short"):
                continue
        elif not (paragraph.heading and paragraph.class_type == "bad" and paragraph.cf_class != "bad"):
            continue
        j, distance = i + 1, 0
        while j < len(paragraphs) and distance <= max_heading_distance:
            if paragraphs[j].class_type == "good":
                paragraph.class_type = "neargood" if copy else "good"
                break
            distance += len(paragraphs[j].text)
            j += 1


def revise_paragraph_classification(paragraphs, max_heading_distance=MAX_HEADING_DISTANCE_DEFAULT):
    """jusText's function of this name, in linear time (the same classes on every page)."""
    _headings(paragraphs, max_heading_distance, copy=True)
    n = len(paragraphs)
    classes = [p.class_type for p in paragraphs]
    forward, backward = range(n), range(n - 1, -1, -1)
    prev_gb, next_gb = _nearest(classes, GOOD_OR_BAD, forward), _nearest(classes, GOOD_OR_BAD, backward)
    with_near = GOOD_OR_BAD + ("neargood",)
    prev_gbn, next_gbn = _nearest(classes, with_near, forward), _nearest(classes, with_near, backward)
    new_classes = {}
    for i, c in enumerate(classes):   # short: decided together, from the classes before any change
        if c != "short":
            continue
        prev, nxt = prev_gb[i], next_gb[i]
        if prev == "good" and nxt == "good":
            new_classes[i] = "good"
        elif prev == "bad" and nxt == "bad":
            new_classes[i] = "bad"
        elif (prev == "bad" and prev_gbn[i] == "neargood") or (nxt == "bad" and next_gbn[i] == "neargood"):
            new_classes[i] = "good"
        else:
            new_classes[i] = "bad"
    for i, c in new_classes.items():
        paragraphs[i].class_type = c
    # near-good: one by one, left to right; the left neighbour may be one revised a step before,
    # the right ones are not revised yet
    classes = [p.class_type for p in paragraphs]
    next_gb = _nearest(classes, GOOD_OR_BAD, backward)
    last = "bad"
    for i, paragraph in enumerate(paragraphs):
        if paragraph.class_type == "neargood":
            paragraph.class_type = "bad" if (last, next_gb[i]) == ("bad", "bad") else "good"
        if paragraph.class_type in GOOD_OR_BAD:
            last = paragraph.class_type
    _headings(paragraphs, max_heading_distance, copy=False)


def install() -> None:
    """Make trafilatura's jusText fallback (and jusText itself) call the linear function."""
    import justext.core  # noqa: PLC0415
    import trafilatura.external  # noqa: PLC0415
    justext.core.revise_paragraph_classification = revise_paragraph_classification
    trafilatura.external.revise_paragraph_classification = revise_paragraph_classification
