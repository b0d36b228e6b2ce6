"""Arrow schemas of the datasets that cross package boundaries (crawl -> text/images/synth -> training).

Stages may add columns (scores, flags) after these; they never rename or drop the ones here.
Compressed HTML columns hold zstd-compressed UTF-8 (see `compress_html`/`decompress_html`).
"""
from __future__ import annotations

import pyarrow as pa
import zstandard

IMAGE_REF = pa.struct([
    ("src", pa.string()),           # absolute URL
    ("alt", pa.string()),           # alt attribute ("" if absent, null if no attribute)
    ("caption", pa.string()),       # <figcaption> text, or null
    ("text_before", pa.string()),   # main text right before the image
    ("text_after", pa.string()),    # main text right after the image
    ("position", pa.int32()),       # character offset of the image in `text` (interleaved order)
])

TABLE_REF = pa.struct([
    ("rows", pa.list_(pa.list_(pa.string()))),  # normalised grid: merged cells repeated, header first
    ("markdown", pa.string()),
    ("caption", pa.string()),
    ("position", pa.int32()),
])

LINK_REF = pa.struct([("url", pa.string()), ("anchor", pa.string())])

PAGES = pa.schema([
    ("id", pa.string()),                 # sha1 of the canonical URL
    ("url", pa.string()),                # canonical requested URL
    ("final_url", pa.string()),          # after redirects
    ("host", pa.string()),               # host[:port], the URL's authority (crawl.urls.authority_of)
    ("depth", pa.int32()),
    ("status", pa.int32()),
    ("fetched_at", pa.string()),         # ISO-8601 UTC
    ("fetch_ms", pa.float64()),
    ("content_type", pa.string()),
    ("encoding", pa.string()),
    ("headers", pa.list_(pa.struct([("name", pa.string()), ("value", pa.string())]))),
    ("raw_html_zstd", pa.binary()),
    ("rendered_html_zstd", pa.binary()),
    ("rendered", pa.bool_()),
    ("robots_noindex", pa.bool_()),
    ("robots_nofollow", pa.bool_()),
    ("training_allowed", pa.bool_()),
    ("title", pa.string()),
    ("text", pa.string()),
    ("language_hint", pa.string()),
    ("author", pa.string()),
    ("date", pa.string()),
    ("canonical_url", pa.string()),
    ("images", pa.list_(IMAGE_REF)),
    ("tables", pa.list_(TABLE_REF)),
    ("outlinks", pa.list_(LINK_REF)),
    ("source", pa.string()),             # crawl | warc | mbox | pdf
])

# Image-text pairs: the image pipeline, synthetic data and CLIP training all use this schema.
QA_ITEM = pa.struct([("question", pa.string()), ("answer", pa.string()), ("type", pa.string())])

PAIRS = pa.schema([
    ("id", pa.string()),
    ("image", pa.binary()),              # encoded image bytes (re-encoded, bounded side)
    ("mime", pa.string()),
    ("width", pa.int32()),
    ("height", pa.int32()),
    ("sha256", pa.string()),
    ("phash", pa.string()),
    ("text", pa.string()),
    ("text_source", pa.string()),        # alt | caption | synthetic:<kind>:<level>
    ("page_url", pa.string()),
    ("language", pa.string()),
    ("clip_score", pa.float32()),
    ("drop_reason", pa.string()),        # null when kept
    ("qa", pa.list_(QA_ITEM)),           # synthetic QA (empty for crawled pairs)
    ("meta_json", pa.string()),          # stage-specific extras (data table, code, boxes, ...)
])

INTERLEAVED_ITEM = pa.struct([
    ("type", pa.string()),               # text | image
    ("text", pa.string()),
    ("image_sha256", pa.string()),
    ("image_src", pa.string()),
    ("clip_score", pa.float32()),
])

INTERLEAVED = pa.schema([
    ("id", pa.string()),
    ("url", pa.string()),
    ("items", pa.list_(INTERLEAVED_ITEM)),
    ("language", pa.string()),
])

TOKENS = pa.schema([
    ("doc_id", pa.string()),
    ("tokens", pa.list_(pa.uint32())),   # one document per row: boundaries are row boundaries
    ("source", pa.string()),
    ("mixture", pa.string()),
])

# Verified synthetic math and code (synth/math_*.py, synth/code_*.py): one problem per row. `text` is
# the training document (problem + worked solution, or function + tests); `steps` carry the
# step verifier's labels (math), so the process-supervision split uses the same schema.
STEP_ITEM = pa.struct([("text", pa.string()), ("value", pa.string()), ("correct", pa.bool_())])
VERIFIED = pa.schema([
    ("id", pa.string()),
    ("kind", pa.string()),               # math | code
    ("family", pa.string()),             # algebra.linear, units.chain, code.list.chunks, ...
    ("language", pa.string()),           # natural language of the text
    ("difficulty", pa.int32()),          # 1 .. 3
    ("text", pa.string()),
    ("problem", pa.string()),
    ("answer", pa.string()),
    ("steps", pa.list_(STEP_ITEM)),
    ("checks_json", pa.string()),        # which independent checks ran and what they found
    ("meta_json", pa.string()),
])


def compress_html(html: str | bytes | None, level: int = 3) -> bytes | None:
    if html is None:
        return None
    data = html.encode("utf-8", "replace") if isinstance(html, str) else html
    return zstandard.ZstdCompressor(level=level).compress(data)


MAX_HTML_BYTES = 64 * 1024 * 1024  # a stored page never inflates past this (a forged column is a bomb)


def decompress_html(blob: bytes | None, max_bytes: int = MAX_HTML_BYTES) -> str | None:
    """The HTML of a compressed column; None when absent or when it would inflate past `max_bytes`
    (read as a stream: a frame's declared size is not trusted)."""
    if blob is None:
        return None
    with zstandard.ZstdDecompressor().stream_reader(blob) as r:
        data = r.read(max_bytes + 1)
    if len(data) > max_bytes:
        return None
    return data.decode("utf-8", "replace")
