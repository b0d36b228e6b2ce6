"""Product declarations (crawl/page_kind.py `page_kind`) and the review rule
(crawl/extract_reviews.py): on a page that declares one product, kept blocks inside review or
testimonial elements are dropped, never all of them; the extractor applies it only there."""
import numpy as np

from crawl.extract import block_selection, extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_reviews import drop_reviews
from crawl.page_kind import page_kind

DESCRIPTION = ["The oak barrel press holds forty litres of crushed apples and presses them in one pass with a "
               "cast iron screw that a single person can turn without help.",
               "Its basket is made of kiln dried beech slats held by steel hoops, and the tray underneath "
               "catches the juice and pours it through a spout into any bucket or demijohn.",
               "Every press is assembled by hand in our workshop, oiled with food safe linseed oil, and "
               "shipped with a spare pressing cloth, a mallet and printed instructions."]
REVIEWS = ["I pressed two hundred kilos of windfalls with it last autumn and the screw never slipped once, "
           "though the basket needed tightening after the first season of heavy use.",
           "Great press for a small orchard. Delivery took three weeks and one of the hoops arrived bent, "
           "but the seller sent a new one quickly and it has worked well since then.",
           "We bought it for our school garden and the children love turning the screw; the juice yield "
           "is far better than the cheap plastic presses we had used before."]
PRODUCT_LD = '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product"}</script>'


def _page(head: str = PRODUCT_LD, review_class: str = "customer-reviews", item_class: str = "review-item") -> str:
    desc = "".join(f"<p>{p}</p>" for p in DESCRIPTION)
    revs = "".join(f'<div class="{item_class}"><p>{r}</p></div>' for r in REVIEWS)
    return (f"<html><head><title>Oak barrel press</title>{head}</head><body><main><h1>Oak barrel press</h1>"
            f"<div class=description>{desc}</div><section class='{review_class}'><h2>What buyers say</h2>{revs}"
            f"</section></main></body></html>")


def _doc(head: str):
    return parse_html(f"<html><head>{head}</head><body><p>x</p></body></html>")


def test_product_declarations():
    assert page_kind(_doc(PRODUCT_LD)) == (False, True)
    assert page_kind(_doc('<meta property="og:type" content="product">')) == (False, True)
    assert page_kind(_doc('<meta property="og:type" content="product.item">')) == (False, True)
    assert page_kind(_doc('<meta property="og:type" content="product.group">')) == (False, False)
    # a category page that lists Product entries declares a list
    assert page_kind(_doc('<script type="application/ld+json">[{"@type": "CollectionPage"}, '
                          '{"@type": "Product"}]</script>')) == (False, False)
    # an article that reviews a product is an article
    assert page_kind(_doc('<script type="application/ld+json">{"@type": "Review", "itemReviewed": '
                          '{"@type": "Product"}}</script><meta property="og:type" content="article">')) == (True, False)
    assert page_kind(_doc("")) == (False, False)


def test_reviews_are_dropped_but_never_everything():
    blocks = segment(parse_html(_page())).blocks
    keep = [True] * len(blocks)
    out = drop_reviews(blocks, keep)
    kept = [b.text for b, k in zip(blocks, out) if k]
    assert all(d in kept for d in DESCRIPTION) and "Oak barrel press" in kept
    assert not any(r in kept for r in REVIEWS) and "What buyers say" not in kept
    only_reviews = [b.text in REVIEWS for b in blocks]
    assert drop_reviews(blocks, only_reviews) == only_reviews      # nothing would be left: unchanged
    # "preview" is not a review
    blocks = segment(parse_html(_page(review_class="image-preview", item_class="preview-card"))).blocks
    assert drop_reviews(blocks, [True] * len(blocks)) == [True] * len(blocks)


def test_block_selection_drops_reviews_on_product_pages_only():
    blocks = segment(parse_html(_page())).blocks
    prob = np.array([0.9] * len(blocks))
    votes = [False] * len(blocks)
    texts = lambda sel: [b.text for b, s in zip(blocks, sel) if s]  # noqa: E731
    assert all(r in texts(block_selection(blocks, prob, 0.5, votes, False, False)) for r in REVIEWS)
    on_product = texts(block_selection(blocks, prob, 0.5, votes, False, True))
    assert not any(r in on_product for r in REVIEWS) and all(d in on_product for d in DESCRIPTION)


def test_extractor_reads_the_declaration():
    with_ld = extract_page(_page(), "https://shop.example/press").text
    without = extract_page(_page(head=""), "https://shop.example/press").text
    assert DESCRIPTION[0] in with_ld and DESCRIPTION[0] in without
    assert REVIEWS[0] not in with_ld
    # the same page without the declaration keeps what the model keeps: the reviews read as content
    assert REVIEWS[0] in without
