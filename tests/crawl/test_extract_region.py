"""One main region (crawl/extract_region.py): kept blocks outside the element that holds most of the
kept words are dropped; spread content keeps its common ancestor; the extractor applies it."""
from crawl.extract import extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_region import main_region, nav_links, navigation_takeover, teasers

STORY = ["The orchard cooperative pressed its first apples of the season on Monday, a week later than usual "
         "after a cold spring delayed the blossom across the whole valley.",
         "Members brought eleven tonnes of fruit to the press, and the juice went into oak barrels that the "
         "cooperative bought last year from a distillery that closed down in the north.",
         "The cider will ferment through the winter and should be ready to bottle in April, the cooperative's "
         "chair said, adding that the yield looked better than the spring had promised.",
         "Prices for dessert apples fell again this autumn, so more growers are sending their whole crop to "
         "the press instead of selling it to the supermarkets in town.",
         "The cooperative was founded forty years ago by six families who shared one hand press in a barn, "
         "and it now counts more than two hundred members from both sides of the river.",
         "Last winter the members voted to replace the old press with a belt press that handles twice the "
         "fruit in a day, paid for by a loan that the bank agreed to spread over ten years.",
         "The new press arrived in August, and the first days of the season showed that it works as promised, "
         "although the crew still needs time to learn how to clean it quickly at night.",
         "Visitors can watch the pressing on Saturday mornings until the end of November, and the shop next "
         "to the barn sells last year's cider, the juice of the week and apples by the crate."]
TEASERS = [("Bees return to the valley", "A survey of hives found colonies recovering after two hard winters "
            "and a spring of late frosts that kept the foragers inside for weeks."),
           ("Council votes on the river path", "The new path along the river will link the three villages and "
            "open next summer if the council approves the last part of the budget.")]


def _page() -> str:
    """A story and, beside it, two teasers of other stories that read like content (in a box whose
    class, 'post', usually marks content)."""
    story = "".join(f"<p>{p}</p>" for p in STORY)
    teasers = "".join(f'<div class="card"><h3>{t}</h3><p>{p}</p></div>' for t, p in TEASERS)
    return (f"<html><head><title>Cooperative presses first apples</title></head><body><div class='wrap'>"
            f"<div class='content'><article><h1>Cooperative presses first apples</h1>{story}</article></div>"
            f"<div class='post'>{teasers}</div></div></body></html>")


def test_kept_blocks_outside_the_main_region_are_dropped():
    blocks = segment(parse_html(_page())).blocks
    texts = [b.text for b in blocks]
    keep = [True] * len(blocks)   # a classifier that kept everything, teasers included
    out = main_region(blocks, keep, [0.9] * len(blocks))
    for i, t in enumerate(texts):
        assert out[i] == (t in STORY or t == "Cooperative presses first apples"), t
    assert keep == [True] * len(blocks)   # a new list; the input is untouched


def test_spread_content_keeps_its_common_ancestor_and_nothing_kept_stays_nothing():
    two = ("<html><body><div class='cols'><div class='a'>" + "".join(f"<p>{p}</p>" for p in STORY[:2]) +
           "</div><div class='b'>" + "".join(f"<p>{p}</p>" for p in STORY[2:]) + "</div></div></body></html>")
    blocks = segment(parse_html(two)).blocks
    keep = [True] * len(blocks)
    prob = [0.9] * len(blocks)
    assert main_region(blocks, keep, prob) == keep          # 50/50: the region is the common parent
    assert main_region(blocks, [False] * len(blocks), prob) == [False] * len(blocks)
    lopsided = [b.text in STORY[:2] or b.text == STORY[2] for b in blocks]
    out = main_region(blocks, lopsided, prob, share=0.6)    # 2/3 of the words in column a
    assert [b.text for b, k in zip(blocks, out) if k] == STORY[:2]


def test_the_region_holds_the_surest_block_so_a_long_thread_does_not_push_out_its_story():
    html = ("<html><body><div class='page'><article><p>" + STORY[0] + "</p></article><div class='thread'>" +
            "".join(f"<p>{p}</p>" for p in STORY[1:]) + "</div></div></body></html>")
    blocks = segment(parse_html(html)).blocks
    keep = [True] * len(blocks)
    story_surest = [0.95 if b.text == STORY[0] else 0.6 for b in blocks]
    assert main_region(blocks, keep, story_surest) == keep   # the region climbs to hold both
    thread_surest = [0.95 if b.text == STORY[1] else 0.6 for b in blocks]
    out = main_region(blocks, keep, thread_surest)           # the story is the look-alike here
    assert [b.text for b, k in zip(blocks, out) if k] == STORY[1:]


def test_extractor_keeps_the_story_and_drops_the_teasers_beside_it(monkeypatch):
    text = extract_page(_page(), "https://news.example/coop").text
    for p in STORY:
        assert p in text
    for _, p in TEASERS:
        assert p not in text
    # the block model alone keeps the teasers: the region is what drops them
    monkeypatch.setattr("crawl.extract.main_region", lambda blocks, keep, prob, **kw: keep)
    text = extract_page(_page(), "https://news.example/coop").text
    assert all(p in text for _, p in TEASERS)


RAIL = [f"Headline number {n} about the valley and its people" for n in range(30)]


def _rail_page(rail_first: bool = False) -> str:
    """A story and a 'more stories' rail that outweighs it: thirty items, each a headline link and a
    paragraph of prose."""
    story = "<article>" + "".join(f"<p>{p}</p>" for p in STORY[:3]) + "</article>"
    rail = "<div class='rail'>" + "".join(
        f"<div class='item'><h4><a href='/s/{n}'>{h}</a></h4><p>{TEASERS[n % 2][1]}</p></div>"
        for n, h in enumerate(RAIL)) + "</div>"
    return f"<html><body><div class='page'>{rail + story if rail_first else story + rail}</div></body></html>"


def test_teasers_do_not_vote_so_a_long_rail_does_not_pull_the_region_off_the_story():
    blocks = segment(parse_html(_rail_page())).blocks
    keep = [True] * len(blocks)
    prob = [0.95 if b.text in STORY else 0.7 for b in blocks]
    rail_words = sum(len(b.words) for b in blocks if b.text not in STORY)
    assert rail_words > 2 * sum(len(b.words) for b in blocks if b.text in STORY)   # share alone would climb
    out = main_region(blocks, keep, prob)
    assert [b.text for b, k in zip(blocks, out) if k] == STORY[:3]


def test_on_a_listing_the_items_are_the_content_and_keep_their_weight():
    blocks = segment(parse_html(_rail_page(rail_first=True))).blocks
    keep = [True] * len(blocks)
    prob = [0.95 if b.text == RAIL[0] else 0.7 for b in blocks]   # the surest block is an item
    out = main_region(blocks, keep, prob)
    assert all(out[i] for i, b in enumerate(blocks) if b.text in RAIL)
    short = _rail_page().replace("about the valley and its people", "")   # 'Headline number 7': a name, not a headline
    blocks = segment(parse_html(short)).blocks
    assert not any(teasers(blocks))


def _manual(section_tag: str, cls: str) -> str:
    """A manual page: a short section, one long section (well over 80% of the words), a short one,
    and a sidebar paragraph beside them."""
    attr = f" class='{cls}'" if cls else ""
    open_, close = f"<{section_tag}{attr}>", f"</{section_tag}>"
    long_part = "".join(f"<p>{p}</p>" for p in STORY[1:] * 3)
    return (f"<html><body><div class='page'><div class='body'>"
            f"{open_}<h2>Description</h2><p>{STORY[0]}</p>{close}"
            f"{open_}<h2>Options</h2>{long_part}{close}"
            f"{open_}<h2>Notes</h2><p>{STORY[7]}</p>{close}</div>"
            f"<div class='sidebar'><p>{TEASERS[0][1]}</p></div></div></body></html>")


def test_the_region_is_the_whole_content_not_its_longest_section():
    for tag, cls in (("div", "refsect1"), ("section", "")):
        blocks = segment(parse_html(_manual(tag, cls))).blocks
        keep = [True] * len(blocks)
        prob = [0.95 if b.text == STORY[3] else 0.9 for b in blocks]   # the surest block: in the long section
        out = main_region(blocks, keep, prob)
        kept = [b.text for b, k in zip(blocks, out) if k]
        assert "Description" in kept and STORY[0] in kept and "Notes" in kept and STORY[7] in kept, (tag, kept)
        assert TEASERS[0][1] not in kept, tag          # the sidebar is not a sibling section: still dropped
        # without the other sections' kept blocks the long section stays the region on its own
        only_long = [k and b.text not in (STORY[0], "Description", "Notes") for b, k in zip(blocks, keep)]
        out = main_region(blocks, only_long, prob)
        assert TEASERS[0][1] not in [b.text for b, k in zip(blocks, out) if k]


def _collapsible(cls: str, body_wrapper: bool) -> str:
    """An API page whose implementations are collapsible sections (<details>, a <summary> heading
    each): a short one, one that outweighs all the rest, a short one; beside them a sidebar."""
    def section(title, paras):
        body = "".join(f"<p>{p}</p>" for p in paras)
        body = f"<div class='items'>{body}</div>" if body_wrapper else body
        return f"<details class='{cls}' open><summary><h3>{title}</h3></summary>{body}</details>"
    return ("<html><body><div class='page'><div class='impls'>" + section("impl Clone", STORY[:1]) +
            section("impl Iterator", STORY[1:7] * 3) + section("impl Debug", STORY[7:]) +
            "</div><div class='sidebar'><p>" + TEASERS[0][1] + "</p></div></div></body></html>")


def test_a_region_in_one_of_like_collapsible_sections_climbs_to_all_of_them():
    for cls, wrapper in (("toggle", True), ("toggle", False), ("", True)):
        blocks = segment(parse_html(_collapsible(cls, wrapper))).blocks
        keep = [True] * len(blocks)
        prob = [0.95 if b.text == STORY[3] else 0.9 for b in blocks]   # the surest block: in the long one
        kept = [b.text for b, k in zip(blocks, main_region(blocks, keep, prob)) if k]
        assert {"impl Clone", STORY[0], "impl Debug", STORY[7]} <= set(kept), (cls, wrapper, kept)
        assert TEASERS[0][1] not in kept, (cls, wrapper)         # the sidebar is not a sibling section
        # no like section holds a kept block: the long one stays the region, and the sidebar stays out
        only_long = [b.text in STORY[1:7] or b.text == TEASERS[0][1] for b in blocks]
        kept = [b.text for b, k in zip(blocks, main_region(blocks, only_long, prob)) if k]
        assert set(kept) == set(STORY[1:7]), (cls, wrapper, kept)


def _api_page() -> str:
    """A Sphinx API page: the function's description, a parameter list that outweighs it, an example;
    beside them a sidebar of the module's other functions."""
    params = "".join(f"<dt>param{i} : int</dt><dd><p>{p}</p></dd>" for i, p in enumerate(STORY))
    return ("<html><body><div class='side'><p>" + TEASERS[0][1] + "</p></div>" + "</div><div class='body' role='main'>"
            "<dl class='py function'><dt class='sig'>press(apples, *, params)</dt><dd>"
            "<p>Press the apples of one harvest into juice for the cooperative's barrels.</p>"
            "<p>Read more in the User Guide.</p>"
            f"<dl class='field-list'>{params}</dl>"
            "<p class='rubric'>Examples</p><p>Pressing a crate gives about forty litres of juice.</p>"
            "</dd></dl></div></body></html>")


def test_a_parameter_list_is_part_of_the_region_not_the_region():
    import crawl.extract_region as region
    blocks = segment(parse_html(_api_page())).blocks
    keep = [not b.text.startswith("press(") for b in blocks]     # the signature scored low
    prob = [0.95 if b.text == STORY[3] else 0.9 for b in blocks]
    kept = [b.text for b, k in zip(blocks, main_region(blocks, keep, prob)) if k]
    assert kept[0].startswith("Press the apples") and "Read more in the User Guide." in kept
    assert "Pressing a crate gives about forty litres of juice." in kept and STORY[7] in kept
    assert TEASERS[0][1] not in kept                             # the sidebar stays out
    try:   # without the rule the list alone was the region: the description fell out
        region.CLIMB_OUT_OF_LISTS = False
        before = [b.text for b, k in zip(blocks, main_region(blocks, keep, prob)) if k]
    finally:
        region.CLIMB_OUT_OF_LISTS = True
    assert not before[0].startswith("Press the apples")


def test_a_table_in_wrappers_climbs_to_the_section_that_holds_its_title_and_introduction():
    """DocBook wraps a table in <div class="table"> (its caption, here not kept) and
    <div class="table-contents">: a region that is the table's body climbs through both to the
    section's title and text, and the table's head comes with its body."""
    rows = "".join(f"<tr><td><p>col{i} int4</p></td><td><p>{STORY[i]}</p></td></tr>" for i in range(6))
    page = ("<html><body><div class='navheader'><a href='/'>Home</a></div><div class='page'><div class='sect1'>"
            "<div class='titlepage'><h2>53.7. pg_orchard</h2></div><p>The catalog pg_orchard lists the trees.</p>"
            "<div class='table'><p class='title'>Table 53.7. pg_orchard Columns</p><div class='table-contents'>"
            f"<table><thead><tr><th><p>Column Type</p></th><th><p>Description</p></th></tr></thead><tbody>{rows}"
            f"</tbody></table></div></div></div><div class='sidebar'><p>{TEASERS[0][1]}</p></div></div></body></html>")
    blocks = segment(parse_html(page)).blocks
    keep = [not (b.text.startswith("Table 53.7") or b.text == "Home" or b.text == TEASERS[0][1]) for b in blocks]
    prob = [0.95 if b.text == STORY[3] else 0.9 for b in blocks]   # the surest block is in the table
    kept = [b.text for b, k in zip(blocks, main_region(blocks, keep, prob)) if k]
    assert kept[:4] == ["53.7. pg_orchard", "The catalog pg_orchard lists the trees.", "Column Type", "Description"]
    assert STORY[5] in kept and "Home" not in kept


REFERENCE = ["Frobnicates the given widget tree in place and returns the number of nodes that changed, so "
             "callers can tell whether a redraw is needed.",
             "The second argument is a list of options; unknown options raise a badarg error rather than being "
             "ignored, which keeps typos from passing silently.",
             "See also defrobnicate/2 for the inverse operation, which restores the tree as it was before."]


def _manual_page(entries: int) -> str:
    """A short reference page beside a sidebar that lists every function of the manual, as
    Erlang/OTP's and pandas' documentation do: one link per entry inside an <aside><nav>."""
    items = "".join(f'<li><a href="m{i // 20}.html#f{i}">function_{i}/{i % 4}</a></li>' for i in range(entries))
    body = "".join(f"<p>{p}</p>" for p in REFERENCE)
    return (f"<html><head><title>widgets</title></head><body><div id='container'><aside id='leftnav'>"
            f"<nav class='leftnav'><ul>{items}</ul></nav></aside><div id='content'><h1>frobnicate/2</h1>"
            f"{body}</div></div></body></html>")


def test_navigation_links_that_take_over_the_selection_are_dropped():
    blocks = segment(parse_html(_manual_page(300))).blocks
    nav = nav_links(blocks)
    assert sum(nav) == 300 and not any(n for b, n in zip(blocks, nav) if b.text in REFERENCE)
    keep = [True] * len(blocks)            # a classifier fooled by the sidebar: it kept everything
    out = navigation_takeover(blocks, keep)
    assert [b.text for b, k in zip(blocks, out) if k] == ["frobnicate/2", *REFERENCE]
    # a few menu links beside the content are a minority of the kept words: they stay
    few = [n and b.text.startswith("function_1/") or not n for b, n in zip(blocks, nav)]
    assert navigation_takeover(blocks, few) == few
    # with nothing else kept, there is nothing to fall back on: the selection stays as it was
    only_nav = list(nav)
    assert navigation_takeover(blocks, only_nav) == only_nav


def test_a_linked_card_of_prose_inside_a_nav_is_not_a_navigation_link():
    page = ("<html><body><nav><a href='/a'><h3>Data strategy</h3><p>A data strategy is critical to turning "
            "information into decisions.</p></a></nav></body></html>")
    blocks = segment(parse_html(page)).blocks
    assert [(b.text, n) for b, n in zip(blocks, nav_links(blocks))] == [
        ("Data strategy", True), ("A data strategy is critical to turning information into decisions.", False)]


def test_extractor_reads_a_reference_page_not_the_sidebar_that_lists_the_whole_manual():
    text = extract_page(_manual_page(3000), "https://docs.example.org/widgets.html").text
    assert all(p in text for p in REFERENCE)
    assert "function_" not in text
