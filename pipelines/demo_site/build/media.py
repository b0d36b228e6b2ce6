"""Gallery pages (images with and without alt, captions, mismatched alts, bad images, SVG) and
the data pages (HTML tables with a header, merged cells, empty cells)."""
from __future__ import annotations

import html

from pipelines.demo_site.build.page import Page, esc


class Figures:
    """Collects <img>/<figure> HTML and the matching ground-truth image entries for one page."""

    def __init__(self, images: dict[str, dict]):
        self.meta = images
        self.entries: list[dict] = []

    def img(self, src: str, alt: str | None, caption: str | None = None, context: str | None = None,
            alt_matches: bool | None = None, caption_matches: bool | None = None, figure: bool | None = None) -> str:
        m = self.meta.get(src, {})
        label = m.get("label")
        if alt_matches is None and alt:
            alt_matches = True if label else None
        if caption_matches is None and caption:
            caption_matches = True if label else None
        figure = caption is not None if figure is None else figure
        attrs = f'src="{src}"'
        if alt is not None:
            attrs += f' alt="{html.escape(alt)}"'
        if m.get("width") and m.get("height") and not m.get("dynamic"):
            attrs += f' width="{m["width"]}" height="{m["height"]}"'
        tag = f"<img {attrs}>"
        if figure:
            cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
            tag = f"<figure>{tag}{cap}</figure>"
        self.entries.append({
            "src": src, "alt": alt, "caption": caption, "context": context, "label": label,
            "alt_matches": alt_matches if alt else None,
            "caption_matches": caption_matches if caption else None,
            "in_figure": figure, "bad": m.get("bad"),
        })
        return tag


def _gallery(path, title, intro, blocks, figs, categories, date="2024-02-10", notes=""):
    """blocks: list of (html, paragraph-text-or-None)."""
    body = [f"<p>{esc(intro)}</p>"]
    paras = [intro]
    for h, text in blocks:
        body.append(h)
        if text:
            paras.append(text)
    return Page(path=path, title=title, lang="en", body="\n".join(body), paragraphs=paras,
                categories=categories, author="Ines Moreau", date=date, images=figs.entries, hub="/gallery/",
                notes=notes)


def p(text):
    return (f"<p>{esc(text)}</p>", text)


def gallery_pages(images: dict[str, dict]) -> list[Page]:
    pages = []

    # 1. shapes: alt + caption, alt only, caption without alt, empty alt (decorative)
    f = Figures(images)
    t1 = "Our colour-naming lesson for young readers starts with simple shapes, one colour at a time."
    t2 = "Circles are the easiest shape to draw freehand, which is why we start every lesson with one."
    t3 = "A square has four equal sides; children often notice that it looks the same after a quarter turn."
    t4 = "The triangle below is green, like the leaves of an apple tree in June."
    t5 = "Stars are harder: ten points alternate between the tips and the inner corners."
    t6 = "Hexagons appear in honeycomb, which is why beekeepers love them."
    blocks = [
        p(t2),
        (f.img("/img/shapes/red-circle.png", "A red circle on a white background",
               "Figure 1. A red circle on a white background.", context=t2), None),
        p(t3),
        (f.img("/img/shapes/blue-square.png", "A blue square on a white background",
               "Figure 2. A blue square on a white background.", context=t3), None),
        p(t4),
        (f"<p>{f.img('/img/shapes/green-triangle.png', 'A green triangle on a white background', context=t4)}</p>", None),
        p(t5),
        (f.img("/img/shapes/yellow-star.png", None, "Figure 3. A yellow star on a dark blue background.", context=t5), None),
        p(t6),
        (f.img("/img/shapes/purple-hexagon.jpg", "A purple hexagon on a light grey background", context=t6), None),
        (f.img("/img/shapes/orange-stripes.jpg", "", context=None), None),
    ]
    pages.append(_gallery("/gallery/shapes.html", "Shapes and colours", t1, blocks, f, ["images", "figures"]))

    # 2. charts with captions and the numbers in the text
    f = Figures(images)
    c1 = "The bar chart shows the number of volunteers at our four autumn pressing days: 12, 22, 32 and 42 people."
    c2 = "The line chart tracks the sugar content of a test batch of juice, which rose steadily over six weeks of ripening."
    c3 = "The pie chart splits last year's harvest: half went to juice, one third to cider and the rest to vinegar."
    blocks = [p(c1), (f.img("/img/charts/bar-chart.png", "A bar chart with four blue bars of increasing height",
                            "Volunteers per pressing day (bar chart).", context=c1), None),
              p(c2), (f.img("/img/charts/line-chart.png", "A line chart with a red line rising from left to right",
                            "Sugar content over six weeks (line chart).", context=c2), None),
              p(c3), (f.img("/img/charts/pie-chart.png", "A pie chart with red, green and blue slices",
                            "How the harvest was used (pie chart).", context=c3), None)]
    pages.append(_gallery("/gallery/charts.html", "Our season in three charts",
                          "Numbers tell part of the orchard story, so here are three small charts from the season.",
                          blocks, f, ["images", "figures", "charts"]))

    # 3. photos without any alt attribute: only surrounding text and captions
    f = Figures(images)
    q1 = "Our first apple of the year was small but perfectly red, with a single leaf still on the stalk."
    q2 = "After the last pressing day we walked to the harbour and watched the sun go down over the water."
    blocks = [p(q1), (f.img("/img/photos/apple.jpg", None, context=q1), None),
              p(q2), (f.img("/img/photos/sunset.jpg", None, "An evening by the sea.", context=q2,
                            caption_matches=True), None)]
    pages.append(_gallery("/gallery/photos.html", "Two pictures from the end of the season",
                          "Not every picture needs a long description, but these two deserve a few words.",
                          blocks, f, ["images", "no_alt"]))

    # 4. deliberately mismatched alt texts and captions (CLIP-filter tests)
    f = Figures(images)
    m1 = "Our image library was migrated twice, and some descriptions ended up attached to the wrong files."
    blocks = [
        (f.img("/img/shapes/blue-square.png", "A red circle on a white background", context=m1,
               alt_matches=False), None),
        (f.img("/img/charts/bar-chart.png", "A grey cat sleeping on a sofa", "A grey cat sleeping on a sofa.",
               context=m1, alt_matches=False, caption_matches=False), None),
        (f.img("/img/photos/apple.jpg", "A green pear on a wooden table", context=m1, alt_matches=False), None),
        (f.img("/img/shapes/green-triangle.png", "A green triangle on a white background",
               "The one description that survived the migration.", context=m1), None),
        (f.img("/img/photos/sunset.jpg", "A snowy mountain peak under a clear sky",
               "Snow on the summit in January.", context=m1, alt_matches=False, caption_matches=False), None),
    ]
    pages.append(_gallery("/gallery/mismatched.html", "Pictures with the wrong descriptions", m1, blocks, f,
                          ["images", "mismatched_alt"],
                          notes="alt_matches=false entries describe something other than the image"))

    # 5. SVG images plus one inline <svg> element
    f = Figures(images)
    s1 = "Vector drawings stay sharp at any size, so we use them for the site's little icons."
    blocks = [p(s1),
              (f.img("/img/svg/house.svg", "A simple house with a red roof", "Our orchard cottage, as an icon.",
                     context=s1), None),
              (f.img("/img/svg/sun.svg", "A yellow sun with rays", "Sunny weather ahead.", context=s1), None),
              (f.img("/img/svg/traffic-light.svg", "A traffic light with red, amber and green lamps", context=s1), None),
              ('<svg class="inline-icon" width="40" height="40" viewBox="0 0 40 40" role="img" aria-label="a green circle">'
               '<circle cx="20" cy="20" r="16" fill="#20a040"/></svg>', None)]
    pg = _gallery("/gallery/svg.html", "Vector icons", "A page of simple SVG drawings.", blocks, f,
                  ["images", "svg"])
    pg.extra["inline_svg"] = [{"label": "a green circle", "aria_label": "a green circle"}]
    pages.append(pg)

    # 6. bad images: corrupt, truncated, empty, HTML-as-JPEG, animated, tracking pixel, banner, bomb, 404
    f = Figures(images)
    b1 = "This page collects images that an image pipeline must reject without crashing."
    bad = [("/img/bad/corrupt.png", "A corrupt file"), ("/img/bad/truncated.jpg", "A red apple with a green leaf"),
           ("/img/bad/empty.jpg", "An empty file"), ("/img/bad/not-an-image.jpg", "A web page pretending to be a photo"),
           ("/img/bad/spinner.gif", "A square changing colour"), ("/img/bad/pixel.gif", ""),
           ("/img/bad/banner.png", "A thin blue bar"), ("/img/bad/huge-100mp.png", "A very large white image"),
           ("/img/bad/missing.png", "A picture that does not exist")]
    blocks = [p(b1)] + [(f.img(src, alt, context=b1, alt_matches=None), None) for src, alt in bad]
    pages.append(_gallery("/gallery/broken.html", "Broken and unusual images", b1, blocks, f,
                          ["images", "bad_images"]))
    return pages


# -- tables ---------------------------------------------------------------------------------
def _table_html(caption, rows, header_rows=1):
    """rows: list of rows; each cell is str or (text, rowspan, colspan). Returns (html, cells)."""
    out = [f"<table>\n<caption>{esc(caption)}</caption>"]
    cells_out = []
    for r, row in enumerate(rows):
        tag = "th" if r < header_rows else "td"
        tds = []
        crow = []
        for c in row:
            text, rs, cs = (c, 1, 1) if isinstance(c, str) else c
            span = (f' rowspan="{rs}"' if rs > 1 else "") + (f' colspan="{cs}"' if cs > 1 else "")
            t = "th" if (tag == "th" or (isinstance(c, tuple) and len(c) > 3 and c[3])) else tag
            tds.append(f"<{t}{span}>{esc(text)}</{t}>")
            crow.append({"text": text, "rowspan": rs, "colspan": cs, "header": t == "th"})
        section = "thead" if r < header_rows else None
        out.append(f"<tr>{''.join(tds)}</tr>" if section is None else f"<thead><tr>{''.join(tds)}</tr></thead>")
        cells_out.append(crow)
    out.append("</table>")
    return "\n".join(out), cells_out


def _grid(cells):
    """Expand rowspan/colspan into a rectangular grid (covered positions repeat the text)."""
    grid: dict[tuple[int, int], str] = {}
    for r, row in enumerate(cells):
        c = 0
        for cell in row:
            while (r, c) in grid:
                c += 1
            for dr in range(cell["rowspan"]):
                for dc in range(cell["colspan"]):
                    grid[(r + dr, c + dc)] = cell["text"]
            c += cell["colspan"]
    nrows = max(r for r, _ in grid) + 1
    ncols = max(c for _, c in grid) + 1
    return [[grid.get((r, c), "") for c in range(ncols)] for r in range(nrows)]


def table_pages() -> list[Page]:
    pages = []

    def tpage(path, title, intro, outro, caption, rows, header_rows, cats, notes=""):
        thtml, cells = _table_html(caption, rows, header_rows)
        body = f"<p>{esc(intro)}</p>\n{thtml}\n<p>{esc(outro)}</p>"
        tbl = {"caption": caption, "header_rows": header_rows, "cells": cells, "grid": _grid(cells),
               "merged": any(c["rowspan"] > 1 or c["colspan"] > 1 for row in cells for c in row),
               "empty_cells": sum(1 for row in cells for c in row if c["text"] == "")}
        return Page(path=path, title=title, lang="en", body=body, paragraphs=[intro, outro], categories=cats,
                    author="Tomas Lindqvist", date="2024-06-01", tables=[tbl], hub="/data/", notes=notes)

    pages.append(tpage(
        "/data/harvest.html", "Harvest figures by variety",
        "Every autumn we measure the juice of each apple variety before blending, because sugar and acidity decide how the cider will taste.",
        "Sharp varieties such as Bramley bring acidity, while bittersweet varieties such as Dabinett bring tannin and body.",
        "Juice measurements, autumn 2023",
        [["Variety", "Harvest month", "Sugar (°Brix)", "Acidity (g/L)"],
         ["Bramley", "October", "11.2", "9.8"],
         ["Dabinett", "November", "13.5", "2.1"],
         ["Cox's Orange Pippin", "September", "12.8", "6.4"],
         ["Kingston Black", "October", "14.1", "5.9"],
         ["Ellis Bitter", "September", "12.2", "2.5"]], 1, ["tables", "simple_table"]))
    pages.append(tpage(
        "/data/merged-cells.html", "Orchard yields by region",
        "Yields vary a great deal between regions and years, so the table groups the figures by region and season.",
        "The drop in 2023 in the north followed a late frost during blossom.",
        "Yield in tonnes per hectare",
        [["Region", "Orchard type", ("Season", 1, 2)],
         ["", "", "2022", "2023"],
         [("North", 2, 1), "Standard trees", "18", "11"],
         ["Bush trees", "32", "24"],
         [("South", 2, 1), "Standard trees", "21", "20"],
         ["Bush trees", "35", "36"],
         [("Total average", 1, 2), "26.5", "22.75"]], 2, ["tables", "merged_cells"],
        notes="two header rows; rowspan=2 region cells, colspan=2 'Season' and 'Total average'"))
    pages.append(tpage(
        "/data/sparse.html", "Tasting notes (incomplete)",
        "Our tasting panel did not score every cider in every category, so some cells are empty.",
        "Empty cells mean the panel did not score that category, not that the score was zero.",
        "Panel scores out of ten",
        [["Cider", "Aroma", "Sweetness", "Finish", "Notes"],
         ["Farmhouse dry", "7", "", "8", "Long and tannic"],
         ["Sparkling perry", "", "6", "", ""],
         ["Ice cider", "9", "10", "9", ""],
         ["Keeved cidre", "8", "", "", "Naturally sweet"]], 1, ["tables", "empty_cells"]))
    return pages
