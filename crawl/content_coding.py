"""A WARC response's payload with its HTTP codings undone, under a size cap.

Archives keep the body as the server sent it. Common Crawl decodes it before writing, but a
browser-driven crawler (one that sends `Accept-Encoding: gzip, deflate, br, zstd`) stores brotli and
zstd bodies, and other tools keep `x-gzip` or stacked codings (`gzip, br`). warcio decodes gzip and
deflate only (brotli too where it is installed, with no cap on the output), so those bodies came
out compressed and were dropped as binary. Here chunking is undone by warcio, and each content
coding, last applied first undone, by a decoder that stops past `max_bytes` of output: a small
body that inflates to gigabytes costs no memory. A coding that does not decode (servers say gzip
and send plain text) leaves the bytes as they were, as browsers and warcio do; a coding nobody
knows leaves them too, for the binary check downstream.
"""
from __future__ import annotations

import io
import zlib

import brotli
import zstandard
from warcio.bufferedreaders import ChunkedDataReader

STEP = 1 << 16


def payload(rec, max_bytes: int) -> bytes:
    """Up to `max_bytes` + 1 bytes of the record's decoded payload: more than `max_bytes` means
    too large. Records without HTTP headers (resource records) are returned as stored."""
    http = rec.http_headers
    stream = rec.raw_stream
    if http is None:
        return stream.read(max_bytes + 1)
    if (http.get_header("Transfer-Encoding") or "").strip().lower() == "chunked":
        stream = ChunkedDataReader(stream)
    body = stream.read(max_bytes + 1)
    codings = [c.strip().lower() for c in (http.get_header("Content-Encoding") or "").split(",")]
    for coding in reversed([c for c in codings if c and c != "identity"]):
        body = decoded(body, coding, max_bytes + 1)
    return body


def decoded(data: bytes, coding: str, limit: int) -> bytes:
    """`data` with one content coding undone, at most `limit` bytes of it; `data` unchanged where
    the coding is unknown or the bytes are not in it."""
    decode = _DECODERS.get(coding)
    if decode is None:
        return data
    try:
        return decode(data, limit)
    except (zlib.error, brotli.error, zstandard.ZstdError, EOFError, ValueError):
        return data


def _inflate(data: bytes, limit: int, wbits: int) -> bytes:
    z = zlib.decompressobj(wbits)
    out = z.decompress(data, limit)
    if not out and data:
        raise ValueError("no output")
    return out


def _gzip(data: bytes, limit: int) -> bytes:
    return _inflate(data, limit, 47)          # gzip or zlib header, told apart by zlib


def _deflate(data: bytes, limit: int) -> bytes:
    try:
        return _inflate(data, limit, 15)      # what the standard means: a zlib stream
    except zlib.error:
        return _inflate(data, limit, -15)     # what many servers send: raw deflate


def _brotli(data: bytes, limit: int) -> bytes:
    d, parts, size, chunk = brotli.Decompressor(), [], 0, data
    while size < limit:
        out = d.process(chunk, output_buffer_limit=min(STEP, limit - size))
        chunk = b""
        parts.append(out)
        size += len(out)
        if d.is_finished() or (not out and d.can_accept_more_data()):
            break
    return b"".join(parts)[:limit]


def _zstd(data: bytes, limit: int) -> bytes:
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as r:
        return r.read(limit)


_DECODERS = {"gzip": _gzip, "x-gzip": _gzip, "deflate": _deflate, "br": _brotli, "zstd": _zstd}
