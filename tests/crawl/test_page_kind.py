"""Article declarations (crawl/page_kind.py) and the article region (crawl/extract_region.py
`article_region`): on a page that says it is an article, kept blocks outside the region of its sure
blocks are dropped, and the extractor applies it."""
from crawl.extract import extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_region import SURE, article_region
from crawl.page_kind import declared_types, declares_article, meta_content
from tests.crawl.test_extract_region import STORY


def _doc(head: str):
    return parse_html(f"<html><head>{head}</head><body><p>x</p></body></html>")


def test_open_graph_and_json_ld_declarations():
    assert declares_article(_doc('<meta property="og:type" content="article">'))
    assert declares_article(_doc('<meta name="OG:TYPE" content=" Article ">'))
    assert declares_article(_doc('<script type="application/ld+json">{"@context": "https://schema.org", '
                                 '"@graph": [{"@type": "WebPage"}, {"@type": "NewsArticle", "author": '
                                 '{"@type": "Person"}}]}</script>'))
    assert declares_article(_doc('<script type="application/ld+json">{"@type": ["BlogPosting", "Thing"],}'
                                 '</script>'))                         # not valid JSON: still read
    assert not declares_article(_doc('<meta property="og:type" content="website">'
                                     '<script type="application/ld+json">{"@type": "Product"}</script>'))
    assert not declares_article(_doc('<script>var x = {"@type": "NewsArticle"}</script>'))  # not JSON-LD
    assert not declares_article(_doc(""))
    assert declared_types(_doc('<meta property="og:type" content="video.movie">')) == ("video.movie", set())
    # a tag may carry both attributes; either one names it
    assert declares_article(_doc('<meta property="og:type" content="article" name="type">'))


def test_meta_content_order_and_emptiness():
    doc = _doc('<meta name="date" content="  "><meta name="og-title" property="og:title" content="A  story">'
               '<meta property="article:published_time" content="2024-01-02"><meta name="date" content="2023">')
    assert meta_content(doc, "og:title") == "A story"
    assert meta_content(doc, "article:published_time", "date") == "2024-01-02"   # earlier name wins
    assert meta_content(doc, "date") == "2023"                                     # empty content skipped
    assert meta_content(doc, "author") is None


TEASERS = [("Bees return to the valley after two hard winters in a row",
            "A survey of hives found colonies recovering after two hard winters and a spring of late frosts "
            "that kept the foragers inside for weeks on end."),
           ("Council votes on the river path linking the three villages",
            "The new path along the river will link the three villages and open next summer if the council "
            "approves the last part of the budget this month."),
           ("School garden wins the county prize for the second year",
            "Pupils grew forty kinds of vegetables and sold the harvest at the Saturday market to pay for a "
            "new greenhouse behind the gym.")]


def _news_page(declared: bool) -> str:
    """A story, then a rail of teasers whose items carry their own modifier classes (so they are not
    one repeated structure), each a headline link and a blurb."""
    head = '<meta property="og:type" content="article">' if declared else ""
    story = "".join(f"<p>{p}</p>" for p in STORY)
    rail = "".join(f'<div class="item item--type-{k}"><h3><a href="/s/{k}">{t}</a></h3><p>{p}</p></div>'
                   for k, (t, p) in enumerate(TEASERS))
    return (f"<html><head><title>Cooperative presses first apples</title>{head}</head><body>"
            f"<div class='page'><div class='main'><article><h1>Cooperative presses first apples</h1>{story}"
            f"</article></div><div class='more'><h2>More stories</h2>{rail}</div></div></body></html>")


def test_article_region_keeps_the_story_and_drops_what_lies_outside_its_sure_blocks():
    blocks = segment(parse_html(_news_page(True))).blocks
    texts = [b.text for b in blocks]
    keep = [True] * len(blocks)                       # a classifier that kept everything
    prob = [0.99 if t in STORY[4:] else 0.8 for t in texts]
    voted = [t in STORY[:4] for t in texts]           # trafilatura read only the first half of the story
    out = article_region(blocks, keep, prob, voted)
    assert [t for t, k in zip(texts, out) if k] == ["Cooperative presses first apples", *STORY]
    assert keep == [True] * len(blocks)               # a new list; the input is untouched
    # no sure block: nothing anchors a region, nothing is dropped
    assert article_region(blocks, keep, [SURE - 0.01] * len(blocks), [False] * len(blocks)) == keep


def test_the_extractor_drops_teasers_on_a_page_declared_as_an_article():
    text = extract_page(_news_page(True), "https://news.example/apples").text
    for p in STORY:
        assert p in text
    for t, p in TEASERS:
        assert t not in text and p not in text, t
