"""Parts of a unit kept together (crawl/extract_units.py): a `<pre>` listing cut into several blocks
by the block elements inside it (a source-code view: every function in a `<div>`), a definition
list's terms with their kept definition, and a kept term's definition when it reads as prose."""
from crawl.extract import extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_units import section_headings, voted_listings, whole_units

IMPORTS = "import itertools\nimport math\nfrom copy import copy"
FUNCS = ["def press(apples):\n    return [a.juice() for a in apples]",
         "def ferment(juice, weeks=12):\n    return juice.age(weeks)"]
BETWEEN = "class Barrel(Container):\n    litres = 225"


def _blocks(html: str):
    """The page's blocks, as the extractor segments them, and their texts."""
    blocks = segment(parse_html(html)).blocks
    return blocks, [b.text for b in blocks]


def _source_view(intro: str = "") -> str:
    body = (f"{IMPORTS}\n<div class='viewcode-block'>{FUNCS[0]}\n</div>{BETWEEN}\n"
            f"<div class='viewcode-block'>{FUNCS[1]}\n</div>")
    return (f"<html><head><title>Source code for orchard.press</title></head><body>"
            f"<ul class='nav'><li><a href='/'>Home</a></li><li><a href='/idx'>Index</a></li></ul>"
            f"<div class='body'><h1>Source code for orchard.press</h1>{intro}<div class='highlight'><pre>{body}</pre>"
            f"</div></div><div class='footer'>Last update: Nov 11, 2026</div></body></html>")


def test_one_kept_piece_keeps_every_piece_of_its_listing_and_nothing_else():
    blocks, _ = _blocks(_source_view())
    listing = [i for i, b in enumerate(blocks) if "pre" in b.ctx.marks]
    assert len(listing) == 4, [b.text for b in blocks]       # imports, function, class, function
    keep = [False] * len(blocks)
    keep[listing[1]] = True                                   # the classifier kept one function
    out = whole_units(blocks, keep)
    assert [i for i, k in enumerate(out) if k] == listing
    assert keep.count(True) == 1                              # a new list; the input is untouched
    assert whole_units(blocks, [False] * len(blocks)) == [False] * len(blocks)


def test_separate_listings_stay_separate():
    page = ("<html><body><pre>first = 1<div>second = 2</div></pre><p>Between the two listings.</p>"
            "<pre>third = 3<div>fourth = 4</div></pre></body></html>")
    blocks, texts = _blocks(page)
    keep = [t == "second = 2" for t in texts]
    out = whole_units(blocks, keep)
    assert [t for t, k in zip(texts, out) if k] == ["first = 1", "second = 2"]


def test_the_extractor_keeps_the_whole_source_view():
    intro = "<p>" + " ".join(["This module presses the apples of the orchard and ferments their juice."] * 3) + "</p>"
    text = extract_page(_source_view(intro), "https://docs.example.org/_modules/orchard/press.html").text
    for part in (IMPORTS, *FUNCS, BETWEEN):
        assert part in text, (part, text)
    assert "Home" not in text.split("\n")


GLOSSARY = [("CIDR", "Classless Inter-Domain Routing, the notation that writes a network as an address and a prefix."),
            ("MVCC", "Multiversion concurrency control: readers see a snapshot and never wait for writers."),
            ("WAL", "Write-ahead log: every change is logged before the data files are written.")]


def test_a_kept_definition_keeps_its_terms_and_only_its_own():
    items = "".join(f"<dt><span class='term'>{t}</span></dt><dd><p>{d}</p></dd>" for t, d in GLOSSARY)
    page = f"<html><body><h1>Acronyms</h1><div class='variablelist'><dl>{items}</dl></div></body></html>"
    blocks, texts = _blocks(page)
    keep = [t in (GLOSSARY[0][1], GLOSSARY[2][1]) for t in texts]   # two definitions kept, no term
    out = whole_units(blocks, keep)
    assert [t for t, k in zip(texts, out) if k] == ["CIDR", GLOSSARY[0][1], "WAL", GLOSSARY[2][1]]
    two_terms = page.replace("<dt><span class='term'>MVCC</span></dt>",
                             "<dt>MVCC</dt><dt>multiversion concurrency control</dt>")
    blocks, texts = _blocks(two_terms)
    out = whole_units(blocks, [t == GLOSSARY[1][1] for t in texts])
    assert [t for t, k in zip(texts, out) if k] == ["MVCC", "multiversion concurrency control", GLOSSARY[1][1]]


def test_a_kept_term_keeps_a_definition_that_reads_as_prose():
    """An API page's parameter list: the classifier keeps the parameter's name and drops its short
    definition (a type, a one-line sentence, a note in a table); a profile's term/value list (a
    place, a number) and a footer's list of links stay as they were."""
    param = ("<dt class='arg-name'><code>widget</code></dt><dd class='arg-description'>"
             "<p><em>Type:</em>&nbsp;<a href='class.Widget.html'><code>GtkWidget</code></a></p>"
             "<p>The new center widget.</p><table><tr><td>The argument can be NULL.</td></tr></table></dd>"
             "<dt>flags</dt><dd><p>Flags for the new widget, or zero.</p></dd>")
    profile = "<dt>Location</dt><dd>Park City, Utah</dd><dt>Posts</dt><dd>9,525</dd><dt>Joined</dt><dd>Right here.</dd>"
    links = ("<dt>Help</dt><dd><a href='/h'>Help Center, disputes and reports.</a> <a href='/r'>Returns and "
             "refunds.</a></dd>")
    page = f"<html><body><h4>Parameters</h4><dl>{param}</dl><dl>{profile}</dl><dl>{links}</dl></body></html>"
    blocks, texts = _blocks(page)
    terms = ("widget", "Location", "Posts", "Joined", "Help")
    out = whole_units(blocks, [t in terms for t in texts])   # the terms kept, not the definitions
    kept = [t for t, k in zip(texts, out) if k]
    assert kept == ["widget", "Type: GtkWidget", "The new center widget.", "The argument can be NULL.",
                    "Location", "Posts", "Joined", "Help"], kept
    assert "Flags for the new widget, or zero." not in kept   # its own term was not kept


def test_a_voted_example_after_its_kept_introduction_is_kept():
    page = ("<html><body><dl><dd><p>Press the apples of one harvest.</p><p class='rubric'>Examples</p>"
            "<div class='highlight-default'><div class='highlight'><pre>&gt;&gt;&gt; press([1, 2, 3])\n[0.4, 0.8, 1.2]"
            "</pre></div></div><pre>&gt;&gt;&gt; ferment(12)</pre></dd></dl>"
            "<div class='footer'><pre>build 2026-11-11 12:00:00 (0.1.0)</pre></div></body></html>")
    blocks, texts = _blocks(page)
    assert texts == ["Press the apples of one harvest.", "Examples", ">>> press([1, 2, 3]) [0.4, 0.8, 1.2]", ">>> ferment(12)",
                     "build 2026-11-11 12:00:00 (0.1.0)"]
    keep = [True, True, False, False, False]
    assert voted_listings(blocks, keep, [True] * 5) == [True, True, True, True, False]   # the footer: outside the dd
    assert voted_listings(blocks, keep, [True, True, False, True, True]) == keep           # not read as main text
    assert voted_listings(blocks, [True, False, False, False, False], [True] * 5) == [True, False, False, False, False]


def test_a_heading_goes_with_its_kept_section():
    page = ("<html><body><div class='sect1'><h2>DESCRIPTION</h2><div class='sectionbody'><div class='paragraph'>"
            "<p>Presses the apples of one harvest into juice.</p></div></div></div>"
            "<div class='rail'><h2>See also</h2></div><div class='sidebar'><p>Other tools of the orchard.</p></div>"
            "</body></html>")
    blocks, texts = _blocks(page)
    assert texts == ["DESCRIPTION", "Presses the apples of one harvest into juice.", "See also",
                     "Other tools of the orchard."]
    # the first heading's section is kept; the second heading's next block is kept too, but it lies
    # outside the heading's container (a sidebar beside its rail), so that heading stays out
    assert section_headings(blocks, [False, True, False, True]) == [True, True, False, True]
    assert section_headings(blocks, [False, False, False, False]) == [False] * 4
