"""Table rows: generated tables and tables from crawled pages -> markdown, rendered image, QA.

A generated table reuses the chart data generator (same topics, languages, trends) or builds
a small record table with text and number columns. Web tables are normalised (tables_core) and
either become rows or are dropped with a reason.
"""
from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from synth import fonts
from synth import lexicon as L
from synth.chart_data import make_chart_data
from synth.pairs import pair_row, png_bytes
from synth.rng import choice, item_id, item_rng, sample
from synth.table_qa import table_qa
from synth.tables_core import TableLimits, normalise_grid, to_markdown

FIRST_NAMES = ("Ana", "Ben", "Chloé", "David", "Elif", "Farah", "Goro", "Hana", "Ivan", "Jun", "Kofi", "Lena", "Mateo",
               "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tomás", "Uma", "Wei", "Yuki", "Zoe")
DEPTS = ("Sales", "Research", "Support", "Finance", "Design", "Legal")
THEMES = {"plain": ("#ffffff", "#f0f0f0", "#222222", "#bbbbbb"), "blue": ("#ffffff", "#dbe8f7", "#1b2a41", "#8fa9c9"),
          "green": ("#fbfffb", "#d9f0dc", "#1d3b24", "#93c49b"), "dark": ("#26282b", "#3a3d42", "#eeeeee", "#5b6068")}
MAX_COL_PX = 220


def _has_cjk(grid: list[list[str]]) -> bool:
    return any(unicodedata.east_asian_width(ch) in "WF" for r in grid for c in r for ch in c)


def generated_grid(rng: np.random.Generator, lang: str) -> tuple[list[list[str]], str, bool]:
    """(grid, title, homogeneous) for a generated table."""
    if rng.random() < 0.65:
        d = make_chart_data(rng, choice(rng, ("grouped_bar", "stacked_bar", "line")), lang)
        fmt = lambda v: f"{v:,.{d['decimals']}f}" if rng.random() < 0.3 else f"{v:.{d['decimals']}f}"  # noqa: E731
        head = [d["x_label"] or "", *[s["name"] for s in d["series"]]]
        rows = [[c, *[fmt(s["values"][i]) for s in d["series"]]] for i, c in enumerate(d["categories"])]
        title = f"{d['title']} ({d['unit_label']})" if d["unit_label"] else d["title"]
        return [head, *rows], title, True
    n = int(rng.integers(4, 12))
    names = sample(rng, FIRST_NAMES, n)
    head = ["Name", "Department", "City", "Age", "Salary (EUR)"]
    rows = [[nm, choice(rng, DEPTS), choice(rng, L.CITIES["en"]), str(int(rng.integers(22, 65))),
             f"{int(rng.integers(28, 120)) * 1000:,}"] for nm in names]
    if rng.random() < 0.3:  # an empty cell, as real tables have
        rows[int(rng.integers(n))][2] = ""
    return [head, *rows], "Staff list", False


def render_table(grid: list[list[str]], rng: np.random.Generator, title: str | None = None,
                 max_width: int = 1400) -> Image.Image:
    """Draw the grid as an image: header band, optional zebra rows and borders, one font."""
    cjk = _has_cjk(grid)
    fam = fonts.usable(choice(rng, fonts.CJK_FAMILIES["zh"] if cjk else ("DejaVu Sans", "Liberation Sans",
                                                                          "DejaVu Serif", "Liberation Serif")), "zh" if cjk else "en")
    size = int(choice(rng, (13, 14, 15, 16)))
    font = fonts.pil_font(fam, size)
    bg, head_bg, fg, line = THEMES[choice(rng, tuple(THEMES))]
    zebra, borders = bool(rng.random() < 0.5), choice(rng, ("grid", "rows", "none"))
    pad_x, pad_y = 8, 5
    line_h = size + 2 * pad_y + 2

    def fit(text: str) -> str:
        if font.getlength(text) <= MAX_COL_PX:
            return text
        while text and font.getlength(text + "…") > MAX_COL_PX:
            text = text[:-1]
        return text + "…"

    cells = [[fit(c) for c in r] for r in grid]
    widths = [int(max(font.getlength(r[j]) for r in cells)) + 2 * pad_x for j in range(len(cells[0]))]
    while sum(widths) > max_width and len(widths) > 2:  # too wide: drop trailing columns from the image
        widths.pop()
        cells = [r[:len(widths)] for r in cells]
    title_h = line_h if title else 0
    title = fit(title) if title and font.getlength(title) > max_width - 2 * pad_x else title
    w = max(sum(widths) + 2, int(font.getlength(title)) + 2 * pad_x if title else 0)
    h = title_h + line_h * len(cells) + 2
    img = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(img)
    if title:
        d.text((pad_x, pad_y), title, font=font, fill=fg)
    for i, row in enumerate(cells):
        y = title_h + i * line_h
        if i == 0:
            d.rectangle([0, y, w - 1, y + line_h], fill=head_bg)
        elif zebra and i % 2 == 0:
            d.rectangle([0, y, w - 1, y + line_h], fill=head_bg if bg != "#26282b" else "#303236")
        x = 1
        for j, c in enumerate(row):
            num = j > 0 and c.replace(",", "").replace(".", "").replace("-", "").isdigit()
            tx = x + widths[j] - pad_x - font.getlength(c) if num else x + pad_x
            d.text((tx, y + pad_y), c, font=font, fill=fg)
            x += widths[j]
        if borders != "none":
            d.line([(0, y + line_h), (w - 1, y + line_h)], fill=line)
    if borders == "grid":
        x = 0
        for wd in widths:
            d.line([(x, title_h), (x, h - 1)], fill=line)
            x += wd
        d.line([(w - 1, title_h), (w - 1, h - 1)], fill=line)
        d.line([(0, title_h), (w - 1, title_h)], fill=line)
    return img


def table_captions(grid: list[list[str]], title: str | None, source: str) -> dict[str, str]:
    head = [c for c in grid[0] if c]
    n, m = len(grid) - 1, len(grid[0])
    cols = ", ".join(head[:6]) + ("…" if len(head) > 6 else "")
    what = f"titled \"{title}\" " if title else ""
    sentence = f"A table {what}with {n} rows and {m} columns: {cols}."
    para = sentence + f" The first row is {', '.join(c for c in grid[1] if c)}." + \
        (" It comes from a web page." if source == "web" else " It is generated data.")
    return {"keywords": ", ".join(["table"] + ([title] if title else []) + head[:6]), "sentence": sentence,
            "paragraph": para}


def table_row(row_id: str, grid: list[list[str]], rng: np.random.Generator, title: str | None, language: str,
              source: str, homogeneous: bool, notes: dict, page_url: str | None = None,
              extra_meta: dict | None = None) -> dict[str, Any]:
    img = render_table(grid, rng, title)
    qa = table_qa(grid, rng, homogeneous=homogeneous)
    caps = table_captions(grid, title, source)
    meta = {"kind": "table", "source": source, "title": title, "table": grid, "table_markdown": to_markdown(grid),
            "homogeneous": homogeneous, "normalisation": notes, "captions": caps,
            "qa_args": [q["args"] for q in qa], **(extra_meta or {})}
    return pair_row(row_id, png_bytes(img), "table", caps["sentence"], language, qa, meta, page_url=page_url, image=img)


def make_generated_table(seed: int, index: int, languages=None, limits: TableLimits | None = None) -> dict[str, Any]:
    rng = item_rng(seed, "table", index)
    lang = choice(rng, tuple(languages or L.LANGUAGES))
    raw, title, homogeneous = generated_grid(rng, lang)
    grid, reason, notes = normalise_grid(raw, limits)
    assert reason is None, reason  # generated tables are always valid
    return table_row(item_id("table", seed, index), grid, rng, title, lang, "generated", homogeneous, notes,
                     extra_meta={"seed": seed, "index": index})


def web_table_id(page_id: str, k: int) -> str:
    return "synth-table-web-" + hashlib.sha1(f"{page_id}:{k}".encode()).hexdigest()[:20]


def make_web_table(seed: int, page: dict[str, Any], k: int, table: dict[str, Any],
                   limits: TableLimits | None = None) -> tuple[dict[str, Any] | None, str | None, dict]:
    """(row, None, notes) or (None, drop_reason, notes) for table k of a crawled page."""
    grid, reason, notes = normalise_grid(table.get("rows"), limits)
    if reason:
        return None, reason, notes
    rid = web_table_id(page.get("id") or page.get("url") or "", k)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [int(seed) & 0xFFFFFFFF, int(hashlib.sha1(rid.encode()).hexdigest()[:8], 16)])))
    row = table_row(rid, grid, rng, table.get("caption") or page.get("title"), page.get("language_hint") or "und",
                    "web", False, notes, page_url=page.get("url"), extra_meta={"table_index": k})
    return row, None, notes
