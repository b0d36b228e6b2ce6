"""HTML tables as normalised grids (row/col spans expanded, header rows first) and markdown.

The synthetic-data pipeline renders and asks questions about these, so merged cells are
repeated into every position they cover and ragged rows are padded to a rectangle.
"""
from __future__ import annotations

import re

MAX_SPAN = 50
MAX_CELLS = 20_000


def _cell_text(cell) -> str:
    return re.sub(r"\s+", " ", cell.text_content()).strip()


def _span(cell, name: str) -> int:
    try:
        return min(max(int(cell.get(name, "1") or 1), 1), MAX_SPAN)
    except ValueError:
        return 1


def table_rows(table) -> list[list[str]]:
    """Grid of cell strings for an lxml <table> (nested tables are left to their own entry)."""
    rows = []
    for tr in table.iter("tr"):
        # skip rows that belong to a nested table
        anc = tr.getparent()
        while anc is not None and anc.tag != "table":
            anc = anc.getparent()
        if anc is not table:
            continue
        rows.append((tr, any(a.tag == "thead" for a in tr.iterancestors())))
    rows.sort(key=lambda t: not t[1])  # header rows first, stable otherwise
    grid: dict[tuple[int, int], str] = {}
    width = 0
    for r, (tr, _) in enumerate(rows):
        c = 0
        for cell in tr:
            if cell.tag not in ("td", "th"):
                continue
            while (r, c) in grid:
                c += 1
            text = _cell_text(cell)
            rs, cs = _span(cell, "rowspan"), _span(cell, "colspan")
            for dr in range(rs):
                for dc in range(cs):
                    if r + dr < len(rows) and len(grid) < MAX_CELLS:
                        grid.setdefault((r + dr, c + dc), text)
            c += cs
            width = max(width, c)
    out = [[grid.get((r, c), "") for c in range(width)] for r in range(len(rows))]
    return [row for row in out if any(row)]


def to_markdown(rows: list[list[str]]) -> str:
    if not rows:
        return ""

    def line(cells):
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(rows[0]), "|" + "---|" * len(rows[0])]
    out += [line(r) for r in rows[1:]]
    return "\n".join(out)


def table_caption(table) -> str | None:
    cap = table.find("caption")
    if cap is not None:
        t = re.sub(r"\s+", " ", cap.text_content()).strip()
        return t or None
    fig = next((a for a in table.iterancestors() if a.tag == "figure"), None)
    if fig is not None:
        fc = fig.find(".//figcaption")
        if fc is not None:
            return re.sub(r"\s+", " ", fc.text_content()).strip() or None
    return None
