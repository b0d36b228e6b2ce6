"""Build rows of the shared PAIRS schema (corpus.schemas.PAIRS) from synthetic images.

Synthetic rows: text = the one-sentence caption, text_source = synthetic:<kind>:sentence,
qa = [{question, answer, type}], everything else (other caption levels, data table, code,
boxes, QA operands) in meta_json.
"""
from __future__ import annotations

import hashlib
import io
import json
from typing import Any

import imagehash
from PIL import Image

LANGUAGE_NAMES = {"en": "English", "fr": "French", "de": "German", "es": "Spanish", "ja": "Japanese", "zh": "Chinese"}


def png_bytes(img: Image.Image, compress_level: int = 6) -> bytes:
    """PNG without metadata chunks (PIL writes none unless asked): same pixels -> same bytes."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=compress_level)
    return buf.getvalue()


def phash_hex(img: Image.Image) -> str:
    return str(imagehash.phash(img))


def pair_row(row_id: str, png: bytes, kind: str, text: str, language: str, qa: list[dict[str, Any]],
             meta: dict[str, Any], page_url: str | None = None, image: Image.Image | None = None) -> dict[str, Any]:
    img = image if image is not None else Image.open(io.BytesIO(png))
    return {
        "id": row_id, "image": png, "mime": "image/png", "width": img.width, "height": img.height,
        "sha256": hashlib.sha256(png).hexdigest(), "phash": phash_hex(img), "text": text,
        "text_source": f"synthetic:{kind}:sentence", "page_url": page_url, "language": language,
        "clip_score": None, "drop_reason": None,
        "qa": [{"question": q["question"], "answer": q["answer"], "type": q["type"]} for q in qa],
        "meta_json": json.dumps(meta, ensure_ascii=False, sort_keys=True),
    }
