"""A page's table of contents is navigation (crawl/extract_contents.py): list items that only link to
fragments of the same page go; permalinked headings, a reference's summary table and an app's
`#/` routes stay. The last test runs the whole extractor on a guide that opens with its contents."""
from crawl.extract import extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_contents import drop_contents

SECTIONS = [("choosing", "Choosing a contractor",
             ("Get three written quotes, check each contractor's licence and insurance, and ask for two "
              "recent clients you can call before you sign anything at all.")),
            ("permits", "Permits and inspections",
             ("Structural changes, new wiring and plumbing need permits, and the inspections that come "
              "with them add weeks to the schedule if nobody plans for them at the start.")),
            ("budget", "Setting a budget",
             ("Labour makes up about sixty percent of most remodeling budgets, and a contingency of a "
              "tenth of the total covers most surprises found behind old walls and under floors."))]


def _kept(html: str) -> list[str]:
    blocks = segment(parse_html(html)).blocks
    out = drop_contents(blocks, [True] * len(blocks))
    return [b.text for b, k in zip(blocks, out) if k]


def test_list_items_linking_to_the_pages_own_sections_go():
    toc = "".join(f"<li><a href='#{i}'>{t}</a></li>" for i, t, _ in SECTIONS)
    body = "".join(f"<h2 id='{i}'>{t}</h2><p>{p}</p>" for i, t, p in SECTIONS)
    kept = _kept(f"<html><body><article><h1>Remodeling</h1><ul class='toc'>{toc}</ul>{body}</article></body></html>")
    assert kept == ["Remodeling"] + [x for _, t, p in SECTIONS for x in (t, p)]


def test_permalinked_headings_summary_tables_and_app_routes_stay():
    heads = "".join(f"<h2 id='{i}'><a href='#{i}'>{t}</a></h2><p>{p}</p>" for i, t, p in SECTIONS)
    table = "<table><tr><td><a href='#fit'>fit(X, y)</a></td></tr></table>"
    routes = "<ul><li><a href='#/items/1'>Walnut desk</a></li><li><a href='#!/items/2'>Oak shelf</a></li></ul>"
    mixed = "<ul><li><a href='#budget'>Budget</a> and <a href='/costs'>costs</a></li></ul>"
    kept = _kept(f"<html><body>{heads}{table}{routes}{mixed}</body></html>")
    assert kept == [x for _, t, p in SECTIONS for x in (t, p)] + ["fit(X, y)", "Walnut desk", "Oak shelf",
                                                                  "Budget and costs"]


def test_the_extractor_reads_a_guides_section_titles_once():
    toc = "".join(f"<li><a href='#{i}'>{t}</a></li>" for i, t, _ in SECTIONS)
    body = "".join(f"<h2 id='{i}'>{t}</h2><p>{p}</p><p>{p}</p>" for i, t, p in SECTIONS)
    html = ("<html><head><title>Remodeling guide</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>Remodeling guide</h1><p>{SECTIONS[0][2]}</p><div class='contents'><p>Contents</p>"
            f"<ol>{toc}</ol></div>{body}</article><footer>Contact us</footer></body></html>")
    text = extract_page(html, "https://example.org/guide").text
    for _, title, para in SECTIONS:
        assert para in text
        assert text.count(title) == 1, title
