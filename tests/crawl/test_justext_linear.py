"""The linear jusText pass (crawl/justext_linear.py) gives upstream's classes, and is what
trafilatura's fallback calls once the extractor has run."""
import random
from types import SimpleNamespace

import pytest

from crawl.justext_linear import revise_paragraph_classification, upstream_revise


def _page(rng: random.Random, n: int) -> list:
    return [SimpleNamespace(cf_class=rng.choice(["short", "short", "neargood", "good", "bad"]),
                            heading=rng.random() < 0.2, text="w" * rng.choice([0, 5, 40, 120, 260]),
                            class_type="") for _ in range(n)]


def _classes(fn, page, distance) -> list[str]:
    paragraphs = [SimpleNamespace(**vars(p)) for p in page]
    fn(paragraphs, distance)
    return [p.class_type for p in paragraphs]


@pytest.mark.parametrize("seed", range(40))
def test_same_classes_as_upstream(seed):
    rng = random.Random(seed)
    for _ in range(25):
        page = _page(rng, rng.randrange(0, 60))
        distance = rng.choice([0, 150, 200])
        assert _classes(revise_paragraph_classification, page, distance) == _classes(upstream_revise, page, distance)


def test_trafilatura_calls_it_after_extraction():
    import justext.core
    import trafilatura.external

    from crawl.extract import extract_page
    extract_page("<html><body><p>Some words in a paragraph of text.</p></body></html>", "http://x.test/")
    assert trafilatura.external.revise_paragraph_classification is revise_paragraph_classification
    assert justext.core.revise_paragraph_classification is revise_paragraph_classification
