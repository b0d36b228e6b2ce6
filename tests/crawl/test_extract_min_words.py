"""A selection of fewer than MIN_WORDS words is no main content (crawl/extract.py too_few_words):
what a page without content shows around its empty place (a bot wall's "Help" link, a lone price)
is not a page's text; a short real paragraph is."""
from crawl.extract import MIN_WORDS, extract_page, parse_html, too_few_words
from crawl.extract_blocks import segment


def test_a_shell_page_whose_only_words_are_its_footer_has_no_text():
    """A script-drawn item page saved before its script ran: nothing clears the model's bar, and the
    most likely block (a footer heading) would otherwise be the page's whole text."""
    html = ("<html><head><title>Item</title></head><body><div id='root'></div><div class='site-footer'><dl>"
            "<h5>Help</h5><dd><a href='/h'>Help Center</a>, <a href='/d'>Disputes &amp; Reports</a>, "
            "<a href='/r'>Return&amp;refund policy</a></dd><h5>Browse by Category</h5><dd><a href='/a'>All "
            "Popular</a>, <a href='/p'>Product</a>, <a href='/l'>Low Price</a></dd></dl></div>"
            "<script>window.runParams = {}</script></body></html>")
    ex = extract_page(html, "https://shop.example/item/1.html")
    assert ex.text == "" and ex.error == "no_main_content"


def test_a_short_page_is_still_text():
    html = ("<html><body><main><h1>Hours</h1><p>The museum is closed on Mondays, and opens at ten on every "
            "other day of the week.</p></main></body></html>")
    assert extract_page(html, "https://museum.example/hours").text == (
        "Hours\nThe museum is closed on Mondays, and opens at ten on every other day of the week.")


def test_the_rule_counts_words_over_all_kept_blocks():
    blocks = segment(parse_html("<html><body><p>Only</p><p>three</p><p>words</p><p>and two</p></body></html>")).blocks
    assert MIN_WORDS == 5
    assert too_few_words(blocks, [True, True, True, False]) == [False] * 4
    assert too_few_words(blocks, [True, True, True, True]) == [True] * 4
