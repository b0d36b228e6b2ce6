"""Static HTML read the way a browser shows it: React's streamed content moved into its placeholders
(crawl/streamed_html.py), and a <button> that libxml2 let swallow the rest of a page."""
import lxml.html

from crawl.extract import extract_page, parse_html
from crawl.render_policy import text_budget
from crawl.streamed_html import apply_streamed_swaps
from crawl.visibility import visible_text

ARTICLE = " ".join(f"Sentence {i} of the streamed article about cider presses and their apples." for i in range(30))
COMMENT = "A reader answered that the old press still works after forty autumns of apples."

# The shape React 18 streams (renderToPipeableStream): placeholders first, content later in hidden
# divs, each followed by the script call that moves it.
STREAMED = ("<html><head><title>Streamed</title></head><body><header><a href='/'>Home</a></header><main>"
            "<h1>Presses</h1><!--$?--><template id=\"B:0\"></template><div class='skeleton'></div><!--/$-->"
            "<section><template id=\"P:1\"></template></section></main><footer>Footer words</footer>"
            f"<div hidden id=\"S:0\"><article><p>{ARTICLE}</p></article></div>"
            "<script>$RC=function(b,c){/* moves c into b */};$RC(\"B:0\",\"S:0\")</script>"
            f"<div hidden id=\"S:1\"><p>{COMMENT}</p></div>"
            "<script>$RS(\"S:1\",\"P:1\")</script>"
            "<div hidden id=\"S:9\"><p>Orphan content whose placeholder never existed.</p></div>"
            "<script>$RC(\"B:9\",\"S:9\")</script></body></html>")


def test_streamed_content_is_moved_into_its_placeholders():
    doc = parse_html(STREAMED)  # parse_html applies the swaps
    main = doc.find(".//main")
    text = main.text_content()
    assert "Sentence 0 of the streamed article" in text and COMMENT in text
    assert text.index("Presses") < text.index("Sentence 0") < text.index(COMMENT)  # the placeholders' order
    assert doc.find(".//template") is None and not doc.xpath("//*[@hidden]")
    assert "Orphan content" not in doc.text_content()  # as React does: no placeholder, no content
    assert "Sentence 29" in visible_text(doc)


def test_streamed_page_is_extracted_and_counted_as_visible():
    ex = extract_page(STREAMED, "http://x.test/presses")
    assert "Sentence 0 of the streamed article" in ex.text and "Sentence 29" in ex.text
    visible, _ = text_budget(STREAMED)
    assert visible > 300  # --render auto sees the article as static visible text


def test_swaps_without_the_scripts_pair_ids_and_otherwise_stay_hidden():
    # a saved copy that lost its inline scripts: React's pairing (S:n into B:n or P:n) still holds
    no_call = STREAMED.replace("$RC(\"B:0\",\"S:0\")", "").replace("$RS(\"S:1\",\"P:1\")", "")
    text = parse_html(no_call).find(".//main").text_content()
    assert text.index("Presses") < text.index("Sentence 0") < text.index(COMMENT)
    # no call and no placeholder of that number: nothing moves it, it stays hidden
    lone = no_call.replace('id=\"B:0\"', 'id=\"B:3\"')
    assert "Sentence 0" not in visible_text(parse_html(lone))
    # content that holds its own placeholder, a call naming missing ids, a swap repeated
    odd = ("<html><body><div hidden id='S:2'><p>Inner words here.</p><template id='B:2'></template></div>"
           "<script>$RC(\"B:2\",\"S:2\");$RC(\"B:2\",\"S:2\");$RS(\"S:7\",\"P:7\")</script></body></html>")
    tree = lxml.html.document_fromstring(odd)
    assert apply_streamed_swaps(tree) == 0
    assert isinstance(extract_page(odd, "http://x.test/").text, str)


def test_button_that_swallowed_the_page_does_not_hide_it():
    # `<button><div></button>`: libxml2 ignores that </button>, so the button holds the whole page
    # (an HTML5 parser would close it); a real page of this shape lost every word before.
    story = " ".join(f"Paragraph {i} explains how a mortgage rate is set by the lender." for i in range(40))
    html = ("<html><body><header><button class='menu-button' aria-label='Main menu'><div class='inner'>"
            "<svg></svg><div></button></div><a href='/'>Logo</a><button>Search</button></header>"
            f"<main><article><h1>Mortgage rates</h1><p>{story}</p></article></main></body></html>")
    doc = parse_html(html)
    outer = doc.find(".//button")
    assert "Paragraph 39" in outer.text_content()  # the parser's nesting this test is about
    assert "Paragraph 39" in visible_text(doc)
    ex = extract_page(html, "http://x.test/rates")
    assert "Paragraph 0 explains" in ex.text and "Paragraph 39" in ex.text
    assert "Search" not in visible_text(doc)  # a real button inside is still a label, not text
    # an ordinary button is still a label, not content
    plain = f"<html><body><article><p>{story}</p><button><div>Subscribe now</div></button></article></body></html>"
    assert "Subscribe now" not in visible_text(parse_html(plain))


def test_inactive_tab_panels_are_content():
    # the ARIA tabs pattern: one panel shown, the others hidden until their tab is clicked
    tabs = ("<html><body><main><h1>Send a message</h1><div role='tablist'><button role='tab'>Python</button>"
            "<button role='tab'>Node.js</button></div>"
            "<div role='tabpanel'><pre>client.messages.create(body='Python sample for the apple cart')</pre></div>"
            "<div role='tabpanel' hidden style='display:none'><pre>client.messages.create({body: 'Node sample "
            "for the pear cart'})</pre></div>"
            "<div hidden><p>A hidden store that is not a tab panel.</p></div></main></body></html>")
    text = visible_text(parse_html(tabs))
    assert "Python sample" in text and "Node sample for the pear cart" in text
    assert "hidden store" not in text


def test_collapsed_disclosure_panels_are_content_except_in_navigation():
    # an accordion: each button names its panel in aria-controls and says whether it is open
    page = ("<html><body><header><button aria-expanded='false' aria-controls='menu'>Menu</button>"
            "<ul id='menu' hidden><li><a href='/presses'>All presses</a></li></ul></header><main><h1>Cider presses</h1>"
            "<button aria-expanded='true' aria-controls='p1'>Materials</button>"
            "<div id='p1'><p>The basket is white oak and the screw is cast iron.</p></div>"
            "<button aria-expanded='false' aria-controls='p2 p3'>Care</button>"
            "<div id='p2' hidden><p>Rinse the basket with cold water after every pressing.</p></div>"
            "<div id='p3' style='color: red; display: none'><p>Oil the screw before winter storage.</p></div>"
            "<button aria-expanded='false' aria-controls='p5'>Sizes</button>"
            "<div id='p5' aria-hidden='true' style='height:0;overflow:hidden'><p>The tall press holds forty litres.</p></div>"
            "<div id='p4' hidden><p>A hidden store no control opens.</p></div>"
            "<div role='navigation'><button aria-expanded='false' aria-controls='sub'>More</button>"
            "<div id='sub' style='display:none'>Submenu of the shop</div></div></main></body></html>")
    text = visible_text(parse_html(page))   # parse_html opens the panels
    assert "white oak" in text and "Rinse the basket" in text and "Oil the screw" in text and "forty litres" in text
    assert "hidden store" not in text and "All presses" not in text and "Submenu" not in text
    assert "Rinse the basket with cold water" in extract_page(page, "http://x.test/press").text


def test_inline_white_space_styles_keep_lines_as_the_browser_shows_them():
    """white-space: pre / pre-wrap keep a block's layout, pre-line its line breaks (spaces within a
    line collapse), as a browser lays them out; the default collapses both. Only the emitted text
    changes: the block and its words are the same."""
    from crawl.extract_blocks import segment
    raw = "Steps for the press:\n\n    1. grate   the quinces\n    2. rest one hour\n"
    page = ("<html><body><main>"
            f"<div style='color: red; white-space: pre-wrap'>{raw}</div>"
            f"<div style='WHITE-SPACE:pre-line'>{raw}</div>"
            f"<div>{raw}</div>"
            f"<section style='white-space: pre'><p>{raw}</p><p style='white-space: normal'>{raw}</p></section>"
            "</main></body></html>")
    blocks = segment(parse_html(page)).blocks
    assert len(blocks) == 5 and len({b.text for b in blocks}) == 1
    shown = [b.shown or b.text for b in blocks]
    assert shown[0] == shown[3] == "Steps for the press:\n\n    1. grate   the quinces\n    2. rest one hour"
    assert shown[1] == "Steps for the press:\n\n1. grate the quinces\n2. rest one hour"
    assert shown[2] == shown[4] == "Steps for the press: 1. grate the quinces 2. rest one hour"


def test_modal_dialogs_are_not_content():
    # a consent manager's preference centre, as such scripts put it in the page: a modal dialog whose
    # paragraphs outweigh the thread it covers, and a cart drawer; neither is what the visitor came for
    consent = "".join(f"<h4>Category {i} cookies</h4><p>These technologies help us understand how our site is used "
                      "and how visitors engage with it, which sites referred them, and may store or retrieve "
                      "information on your browser, mostly in the form of cookies, as described here.</p>"
                      for i in range(8))
    posts = "".join(f"<article class='post'><p>Member {i} wrote that the rear bracket of the case holds a hub for the "
                    f"fan controller, and that the inside mount number {i} takes a radiator.</p></article>"
                    for i in range(4))
    page = ("<html><body><header><a href='/'>Forum</a></header><main><h1>What are these two mounts for?</h1>"
            f"{posts}</main><div id='consent-sdk'><div role='dialog' aria-modal='true'>"
            f"<h2>Privacy Preference Center</h2>{consent}</div></div>"
            "<div class='drawer' aria-modal='TRUE'><p>Your cart is empty. Continue shopping for cases.</p></div>"
            "</body></html>")
    assert "Privacy Preference Center" not in visible_text(parse_html(page))
    text = extract_page(page, "http://x.test/t/1").text
    assert "rear bracket of the case" in text and "radiator" in text
    assert "cookies" not in text and "Your cart" not in text
