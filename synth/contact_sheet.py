"""Contact sheets for reports: a grid of generated images, each with its caption and first QA pairs."""
from __future__ import annotations

import io
from typing import Any

from PIL import Image, ImageDraw

from synth import fonts

THUMB = 240
TEXT_H = 120


def _font(size: int):
    fam = next((f for f in ("Noto Sans CJK SC", "Noto Sans CJK JP") if f in fonts.installed_families()), "DejaVu Sans")
    return fonts.pil_font(fam, size)


def wrap_px(text: str, font, width: int) -> list[str]:
    """Greedy wrap by pixel width (works for CJK text, which has no spaces)."""
    lines, cur = [], ""
    for ch in text:
        if font.getlength(cur + ch) > width and cur:
            cut = cur.rfind(" ")
            if cut > len(cur) // 2:
                lines.append(cur[:cut])
                cur = cur[cut + 1:]
            else:
                lines.append(cur)
                cur = ""
        cur += ch
    if cur:
        lines.append(cur)
    return lines


def contact_sheet(rows: list[dict[str, Any]], cols: int = 4, qa_lines: int = 2) -> Image.Image:
    """rows: PAIRS rows (image bytes, text, qa). Returns one RGB image."""
    n = max(1, len(rows))
    cols = min(cols, n)
    nrows = (n + cols - 1) // cols
    cell_w, cell_h = THUMB + 16, THUMB + TEXT_H + 16
    sheet = Image.new("RGB", (cols * cell_w, nrows * cell_h), "white")
    d = ImageDraw.Draw(sheet)
    font = _font(11)
    for k, r in enumerate(rows):
        x, y = (k % cols) * cell_w + 8, (k // cols) * cell_h + 8
        img = Image.open(io.BytesIO(r["image"])).convert("RGB")
        img.thumbnail((THUMB, THUMB))
        sheet.paste(img, (x + (THUMB - img.width) // 2, y + (THUMB - img.height) // 2))
        d.rectangle([x - 1, y - 1, x + THUMB, y + THUMB], outline="#cccccc")
        lines = wrap_px(r.get("text") or "", font, THUMB)[:3]
        for q in (r.get("qa") or [])[:qa_lines]:
            lines += wrap_px(f"Q: {q['question']} A: {q['answer']} [{q['type']}]", font, THUMB)[:2]
        for i, line in enumerate(lines[:8]):
            d.text((x, y + THUMB + 4 + i * 14), line, font=font, fill="#222222" if i < 3 else "#1a5fb4")
    return sheet
