"""Extraction: main text with images in place, figure captions, tables, links, metadata, bad HTML."""
from crawl.extract import extract_page
from crawl.render_policy import render_reason
from crawl.tables import table_rows, to_markdown

P1 = "Normandy is famous for its cider apples, which grow in old orchards across the whole region."
P2 = "Farmers press the apples in autumn and ferment the juice for months before bottling the cider."
P3 = "The final paragraph tells about the taste of the cider, which is dry and sharp and slightly sweet."
PAGE = f"""<html lang="fr-FR"><head><title>Apples of Normandy | Gazette</title>
<meta name="author" content="Jane Doe"><link rel="canonical" href="/apples?utm_source=x"></head>
<body><nav><a href="/">Home</a> <a href="mailto:x@y.z">Mail</a> <a href="http://[broken">bad</a></nav>
<article><h1>Apples of Normandy</h1><p>{P1}</p>
<figure><img src="img/orchard.jpg" alt="An old orchard"><figcaption>Orchard near Caen in spring.</figcaption></figure>
<p>{P2}</p>
<table><caption>Harvest</caption><thead><tr><th>Year</th><th>Tons</th></tr></thead>
<tr><td rowspan="2">2024</td><td>130</td></tr><tr><td>140</td></tr><tr><td colspan="2">total 270</td></tr></table>
<p>{P3} <a href="https://example.org/more?fbclid=1#top">more about cider</a></p>
<img src="/img/press.png" alt="A press">
</article><img src="/pixel.gif" width="1" height="1"></body></html>"""


def test_text_images_in_place_with_captions_and_context():
    ex = extract_page(PAGE, "http://x.test/a/b.html")
    assert ex.error is None
    for p in (P1, P2, P3):
        assert p in ex.text
    assert "Home" not in ex.text
    imgs = {i["src"]: i for i in ex.images}
    orchard = imgs["http://x.test/a/img/orchard.jpg"]
    assert orchard["alt"] == "An old orchard" and orchard["caption"] == "Orchard near Caen in spring."
    assert ex.text.index(P1) < orchard["position"] <= ex.text.index(P2)
    assert orchard["text_before"].endswith(P1) and orchard["text_after"].startswith(P2)
    assert "http://x.test/img/press.png" in imgs
    assert "http://x.test/pixel.gif" not in imgs  # tracking pixel
    assert ex.title and "Apples of Normandy" in ex.title and ex.author == "Jane Doe"
    assert ex.language_hint == "fr-fr" and ex.canonical_url == "http://x.test/apples"


def test_tables_links_and_bad_links():
    ex = extract_page(PAGE, "http://x.test/a/b.html")
    (t,) = ex.tables
    assert t["rows"] == [["Year", "Tons"], ["2024", "130"], ["2024", "140"], ["total 270", "total 270"]]
    assert t["caption"] == "Harvest" and t["markdown"].startswith("| Year | Tons |\n|---|---|")
    assert 0 < t["position"] < ex.text.index(P3)
    urls = {ln["url"]: ln["anchor"] for ln in ex.outlinks}
    assert urls["https://example.org/more"] == "more about cider" and "http://x.test/" in urls
    assert not any(u.startswith("mailto") for u in urls)
    assert [r for _, r in ex.bad_links] == ["invalid_url"]


def test_bad_html_never_raises():
    """Bad input gives the text that is there (never markup, NULs or U+FFFD) or a named error."""
    prose = ("The orchard keeps twelve old varieties of cider apples, and every autumn the pickers "
             "sort them by sweetness before the first pressing begins in the stone barn.")
    words = set(prose.split())
    cases = [  # html, words the text may hold, words it must hold, error
        ("", set(), set(), "unparseable_html"),
        ("   ", set(), set(), "unparseable_html"),
        ("\x00\x00<p>" + prose, words, words, None),
        ("<html><body><p>unclosed <b>tags <table><tr><td>" + prose, words | {"unclosed", "tags"}, words, None),
        ('<?xml version="1.0" encoding="ISO-8859-1"?><html><body><p>' + prose + "</p></body></html>",
         words, words, None),
        ("<p>" + "<div>" * 5000 + prose + "</div>" * 5000, words, words, "deep_nesting_flattened"),
        ("\ufffd" * 1000, set(), set(), "no_visible_text"),
        # a page of one short fragment is the block model's call: its words, or none with a reason
        ("\x00\x00garbage", {"garbage"}, set(), (None, "no_main_content")),
    ]
    for html, may, must, error in cases:
        ex = extract_page(html, "http://x.test/")
        words = set(ex.text.split())
        assert must <= words <= may, (html[:40], ex.text[:80])
        assert ex.error in (error if isinstance(error, tuple) else (error,)), (html[:40], ex.error)
        assert bool(ex.text) == (ex.error in (None, "deep_nesting_flattened")), (html[:40], ex.error)
        assert ex.images == [] and ex.outlinks == [] and ex.tables == []


def test_table_grid_pads_ragged_rows():
    import lxml.html
    t = lxml.html.fromstring("<table><tr><td>a</td><td>b</td><td>c</td></tr><tr><td>d</td></tr></table>")
    assert table_rows(t) == [["a", "b", "c"], ["d", "", ""]]
    assert to_markdown([["a|b", "c"]]) == "| a\\|b | c |\n|---|---|"


def test_render_policy():
    shell = '<html><body><div id="root"></div><script src="/app.js"></script></body></html>'
    assert render_reason(shell, "auto") == "app_shell"
    assert render_reason("<p>" + "words " * 100 + "</p>", "auto") is None
    assert render_reason("<p>hi</p><script>x()</script>", "auto") == "little_text"
    assert render_reason("<p>hi</p>", "never") is None and render_reason("<p>hi</p>", "always") == "always"


CODE = """def press(season):
    for day in season.days:
        if day.weekday in ("tue", "fri"):
\t\t\treturn weekly(day)

    return None"""


def test_preformatted_code_keeps_its_indentation_and_blank_lines():
    html = (f"<html><body><article><h1>Pressing on a schedule</h1><p>{P1}</p><p>{P2}</p>"
            f"<pre><code class='language-python'>\n{CODE.replace('<', '&lt;')}\n\n</code></pre>"
            f"<p>{P3} The <code>press</code>   function   returns None.</p></article></body></html>")
    ex = extract_page(html, "http://x.test/code.html")
    assert CODE in ex.text                        # spaces, tabs and the blank line as written
    assert f"{P3} The press function returns None." in ex.text   # prose around inline code still folds spaces


def test_source_line_wraps_are_spaces_and_br_is_a_line_break():
    wrapped = P1.replace(" which ", "\n   which ").replace(" across ", "\r\nacross ")
    html = (f"<html><body><article><h1>Apples</h1><p>{wrapped}</p><p>{P2}</p>"
            f"<p>{P3}</p><p>Orchard Lane 4<br>Caen<br/>Normandy</p></article></body></html>")
    text = extract_page(html, "http://x.test/wrap.html").text
    assert P1 in text.split("\n")                      # one line, as a browser lays it out
    assert "Orchard Lane 4\nCaen\nNormandy" in text    # <br> still breaks the line


def test_links_marked_nofollow_are_not_followed():
    """rel="nofollow" (any case, among other tokens) takes a link out of the page's links to
    follow; the same URL linked plainly elsewhere on the page stays."""
    from crawl.extract import extract_page
    page = ("<html><body><main><p>Read the manual first.</p>"
            "<a href='/manual.html'>manual</a> <a href='/_sources/manual.rst.txt' rel='NoFollow'>source</a>"
            "<a href='/sort?by=date' rel='noopener nofollow'>by date</a>"
            "<a href='/login' rel='nofollow'>log in</a> <a href='/login'>sign in</a></main></body></html>")
    urls = [ln["url"] for ln in extract_page(page, "https://docs.example.org/").outlinks]
    assert urls == ["https://docs.example.org/manual.html", "https://docs.example.org/login"]
