"""HTML <table> -> grid of strings, merged cells (rowspan/colspan) repeated into every slot they cover.

Used when page shards carry raw HTML but no extracted `tables` column; crawl's extractor fills
TABLE_REF.rows the same way. Spans are clamped so a hostile colspan cannot allocate a huge grid.
"""
from __future__ import annotations

import lxml.html

MAX_SPAN = 50
MAX_ROWS = 20000


def _span(el, name: str) -> int:
    try:
        return max(1, min(MAX_SPAN, int(str(el.get(name, "1")).strip() or 1)))
    except ValueError:
        return 1


def table_grid(table) -> list[list[str]]:
    """One lxml <table> element -> grid (nested tables are not descended into)."""
    grid: dict[tuple[int, int], str] = {}
    rows = [tr for tr in table.iter("tr") if _owner(tr) is table][:MAX_ROWS]
    for r, tr in enumerate(rows):
        c = 0
        for cell in tr:
            if not isinstance(cell.tag, str) or cell.tag.lower() not in ("td", "th"):
                continue
            while (r, c) in grid:
                c += 1
            text = " ".join(cell.text_content().split())
            rs, cs = _span(cell, "rowspan"), _span(cell, "colspan")
            for dr in range(rs):
                for dc in range(cs):
                    grid.setdefault((r + dr, c + dc), text)
            c += cs
    if not grid:
        return []
    n_rows = min(len(rows), max(r for r, _ in grid) + 1)
    n_cols = max(c for _, c in grid) + 1
    return [[grid.get((r, c), "") for c in range(n_cols)] for r in range(n_rows)]


def _owner(tr):
    p = tr.getparent()
    while p is not None and (not isinstance(p.tag, str) or p.tag.lower() != "table"):
        p = p.getparent()
    return p


def parse_html_tables(html: str) -> list[dict]:
    """All tables of a page: [{"rows": grid, "caption": str | None}] in document order."""
    if not html or not html.strip():
        return []
    try:
        doc = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return []
    out = []
    for t in doc.iter("table"):
        cap = t.find("caption")
        out.append({"rows": table_grid(t), "caption": " ".join(cap.text_content().split()) if cap is not None else None})
    return out
