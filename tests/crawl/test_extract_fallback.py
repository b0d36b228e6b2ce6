"""peer_fallback (crawl/extract_fallback.py): trafilatura's main-text blocks stand in when the
classifier keeps almost nothing and the peer reads much more, and only then."""
import numpy as np

from crawl.extract import block_selection, parse_html
from crawl.extract_blocks import segment
from crawl.extract_fallback import PEER_SHARE, SHORT, peer_fallback

PRODUCTS = [("Dark Roast Coffee", "$19.99"), ("Vanilla Latte 12-Pack", "$47.88"), ("Blueberry Coffee", "$19.99"),
            ("Espresso Roast Single-Serve Pods", "$15.99"), ("Coconut Caramel Coffee", "$18.99")] * 4


def _category_page(nav_links: int = 60) -> list:
    nav = "".join(f'<li><a href="/c/{i}">Department number {i}</a></li>' for i in range(nav_links))
    items = "".join(f'<li class="card"><h3>{name}</h3><span>{price}</span></li>' for name, price in PRODUCTS)
    html = (f"<html><body><nav><ul>{nav}</ul></nav><main><h1>Coffee</h1><p>51 products</p>"
            f"<ul class=grid>{items}</ul></main><footer><p>Terms of use</p></footer></body></html>")
    return segment(parse_html(html)).blocks


def _words(blocks, flags) -> int:
    return sum(len(b.words) for b, f in zip(blocks, flags) if f)


def _in_main(blocks) -> list[bool]:
    return [any(a.tag == "main" for a in b.el.iterancestors()) for b in blocks]


def test_short_selection_takes_the_peers_list():
    blocks = _category_page()
    votes = _in_main(blocks)
    keep = [b.text == "Coffee" for b in blocks]          # the classifier kept the heading only
    out = peer_fallback(blocks, keep, votes)
    assert out == [k or v for k, v in zip(keep, votes)]
    assert _words(blocks, out) > 2 * _words(blocks, keep)


def test_no_fallback_when_the_selection_is_long_the_peer_finds_little_or_the_whole_page():
    blocks = _category_page()
    votes = _in_main(blocks)
    assert _words(blocks, votes) < PEER_SHARE * _words(blocks, [True] * len(blocks))
    # a selection of at least SHORT words stands
    long_keep = [not v for v in votes]
    assert _words(blocks, long_keep) >= SHORT
    assert peer_fallback(blocks, long_keep, votes) == long_keep
    # the peer reads less than twice what was kept
    keep = [v and i % 2 == 0 for i, v in enumerate(votes)]
    assert _words(blocks, keep) < SHORT
    assert peer_fallback(blocks, keep, votes) == keep
    # a vote for (nearly) the whole page carries no information
    small = [b.text == "Coffee" for b in blocks]
    assert peer_fallback(blocks, small, [True] * len(blocks)) == small


def test_block_selection_applies_it_with_votes_and_not_without():
    blocks = _category_page()
    votes = _in_main(blocks)
    prob = np.array([0.9 if b.text == "Coffee" else 0.01 for b in blocks])
    without = block_selection(blocks, prob, 0.5)
    assert _words(blocks, without) < SHORT
    with_votes = block_selection(blocks, prob, 0.5, votes)
    assert [i for i, k in enumerate(with_votes) if k] == [i for i, (k, v) in enumerate(zip(without, votes)) if k or v]


def test_a_vote_that_leaves_most_blocks_out_counts_even_when_it_holds_nearly_every_word():
    """A source-code view: one long listing is nearly all of the page's words; the vote picks it and
    leaves the menu, title and footer out, so it says where the content is."""
    code = "\n".join(f"def handler_{i}(request, *args):\n    return respond(request, status={200 + i})" for i in range(80))
    menu = "".join(f'<li><a href="/m/{i}">Module {i}</a></li>' for i in range(8))
    html = (f"<html><body><ul class=menu>{menu}</ul><h1>Source code for app.handlers</h1>"
            f"<pre>{code}</pre><p>Last update: today</p></body></html>")
    blocks = segment(parse_html(html)).blocks
    votes = [b.el.tag == "pre" for b in blocks]
    assert _words(blocks, votes) >= PEER_SHARE * _words(blocks, [True] * len(blocks))
    keep = [b.text.startswith("Source code") for b in blocks]   # the model kept the title only
    out = peer_fallback(blocks, keep, votes)
    assert out == [k or v for k, v in zip(keep, votes)]
    # the same words voted block by block, every block: a whole-page vote, still ignored
    assert peer_fallback(blocks, keep, [True] * len(blocks)) == keep


def test_a_page_that_is_one_listing_takes_the_vote_and_an_app_shells_line_does_not():
    """A page of one or two blocks: a source view that is one <pre> of SHORT words or more has
    nothing else the vote could have kept, so the vote stands; an app shell's one line (under SHORT
    words) is still a whole-page vote, refused."""
    from crawl.extract import extract_page
    code = "\n".join(f"{i:03d}     public static int parse{i}(final String str) {{ return {i}; }}" for i in range(1, 60))
    view = f"<html><body class='source-page'><main role='main'><div class='source-container'><pre>{code}</pre></div></main></body></html>"
    blocks = segment(parse_html(view)).blocks
    assert len(blocks) == 1 and len(blocks[0].words) >= SHORT
    assert peer_fallback(blocks, [False], [True]) == [True]
    text = extract_page(view, "https://docs.example.org/src-html/NumberUtils.html").text
    assert "public static int parse7(final String str) { return 7; }" in text
    shell = segment(parse_html("<html><body><noscript>You need to enable JavaScript to run this app.</noscript>"
                               "<div id=root></div></body></html>")).blocks
    assert len(shell) == 1 and len(shell[0].words) < SHORT
    assert peer_fallback(shell, [False], [True]) == [False]
