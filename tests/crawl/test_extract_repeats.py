"""Text a page carries twice is emitted once (crawl/extract_repeats.py): a quoted post and a copied
section go; a summary line repeated in an API page's details, and short lines, stay. The last test
runs the whole extractor on a page that holds its article twice."""
from crawl.extract import extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_repeats import drop_repeated

PARAS = ["Home remodeling in the valley is a significant investment, with costs that vary widely by town, "
         "by the scope of the work and by the materials chosen for the kitchen and the bathrooms.",
         "Labour makes up about sixty percent of most remodeling budgets, which makes the choice of a "
         "contractor one of the largest decisions of the whole project for most households.",
         "Permits are needed for structural changes, new wiring and plumbing, and the inspections that "
         "come with them add weeks to the schedule if nobody plans for them at the start.",
         "A contingency of a tenth of the budget covers most surprises behind old walls and under floors."]


def _kept(html: str) -> list[str]:
    blocks = segment(parse_html(html)).blocks
    out = drop_repeated(blocks, [True] * len(blocks))
    return [b.text for b, k in zip(blocks, out) if k]


def test_a_reply_quoting_the_first_post_keeps_only_its_own_words():
    reply = "Get three quotes before you sign anything, and ask each contractor for two recent clients."
    html = (f"<html><body><div class='post'><p>{PARAS[0]}</p></div>"
            f"<div class='post'><blockquote><p>{PARAS[0]}</p></blockquote><p>{reply}</p></div>"
            f"<div class='post'><div class='bbCodeBlock--quote'><p>{PARAS[0]}</p></div><p>Agreed.</p></div>"
            f"</body></html>")
    assert _kept(html) == [PARAS[0], reply, "Agreed."]


def test_a_second_copy_of_a_section_goes():
    copy = "".join(f"<p>{p}</p>" for p in PARAS)
    html = (f"<html><body><div class='mobile'><h2>Costs</h2>{copy}</div>"
            f"<div class='desktop'><h2>Costs</h2>{copy}</div></body></html>")
    # the run test leaves the 1-word heading, too short to judge alone; the second container repeats
    # the first block for block, so it goes whole
    assert _kept(html) == ["Costs"] + PARAS


def test_isolated_repeats_of_a_reference_page_stay():
    summary = "Compute clusters from a data matrix and predict labels for each sample."
    html = (f"<html><body><dl><dt>fit_predict</dt><dd>{summary}</dd><dt>fit</dt><dd>{PARAS[2]}</dd></dl>"
            f"<h3>fit_predict</h3><p>{summary}</p><p>{PARAS[1]}</p></body></html>")
    assert _kept(html).count(summary) == 2     # one repeated block: no run, not quoted


def test_a_gallery_caption_shown_again_goes_but_a_short_line_under_each_picture_stays():
    caption = "Defense ministers shake hands in Hanoi on Wednesday at the start of a two-day visit."
    again = "Read my review of this hotel here."
    html = (f"<html><body><ul class='gallery'><li><img src='a.jpg'><div class='caption'>{caption}</div></li></ul>"
            f"<p>{PARAS[0]}</p><div class='caption-remote'><div class='caption-full'>{caption}</div></div>"
            f"<figure><img src='b.jpg'><div class='wp-caption-text'>{again}</div></figure>"
            f"<figure><img src='c.jpg'><div class='wp-caption-text'>{again}</div></figure></body></html>")
    assert _kept(html) == [caption, PARAS[0], again, again]


def test_a_copy_too_short_to_be_a_section_stays():
    line = "Dishwasher safe, microwave safe, made in the hills."
    html = f"<html><body><p>{line}</p><p>{line}</p><p>{line}</p></body></html>"
    assert _kept(html) == [line] * 3


def test_the_extractor_emits_an_article_held_twice_once():
    body = "".join(f"<p>{p}</p>" for p in PARAS)
    html = ("<html><head><title>Remodeling costs</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>Remodeling costs</h1><div class='d-md-none'>{body}</div>"
            f"<div class='d-none d-md-block'>{body}</div></article></body></html>")
    text = extract_page(html, "https://example.org/costs").text
    for p in PARAS:
        assert text.count(p) == 1


MUG = ["Make each cup of tea or coffee feel special with a ceramic mug, wheel thrown, with a matte "
       "textured outside and a clear glazed inside.", "Handmade stoneware.", "Size: approx. 9.5 x 13 x 7cm",
       "Volume: approx. 350ml", "Suitable for dishwashers and microwave ovens; take care when stacking."]


def test_a_description_rendered_twice_goes_though_short_lines_break_it_into_short_runs():
    desc = "".join(f"<p>{p}</p>" for p in MUG)
    html = (f"<html><body><h1>White speckle mug</h1><div class='ProductItem-details-excerpt'>{desc}</div>"
            f"<div class='ProductItem-details-excerpt-mobile'>{desc}</div></body></html>")
    assert _kept(html) == ["White speckle mug", *MUG]


def test_a_repeated_entry_that_is_a_small_part_of_its_page_stays():
    entry = ("<div class='param'><h4>description</h4><p>An arbitrary string attached to the object, shown "
             "in the dashboard beside it and often useful for people reading the records later.</p></div>")
    filler = "".join(f"<p>{p}</p>" for p in PARAS * 3)
    html = f"<html><body><section>{entry}{filler}</section><section>{entry}{filler[:400]}</section></body></html>"
    kept = _kept(html)
    assert kept.count("description") == 2 and sum("arbitrary string" in t for t in kept) == 2


def test_a_copied_list_of_short_lines_goes_though_no_line_is_long_enough_to_judge_alone():
    specs = ["Weight: 2 kg", "Height: 30 cm", "Width: 20 cm", "Colour: speckled white", "Material: stoneware clay",
             "Made in Portugal", "Care: wash by hand"]
    rows = "".join(f"<li>{s}</li>" for s in specs)
    html = f"<html><body><h1>Tall vase</h1><ul class='specs'>{rows}</ul><ul class='specs-mobile'>{rows}</ul></body></html>"
    assert _kept(html) == ["Tall vase", *specs]
