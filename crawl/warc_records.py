"""WARC records that survive a corrupt one: the reader resumes at the next record instead of
stopping.

warcio's ArchiveIterator raises on the first record it cannot parse (a damaged gzip member, a
garbled header line) and cannot go on, so one bad record in a Common Crawl file of 40,000 used to
lose every record after it. Here, after an error, the file is scanned forward from the start of
the last record read for the next place a record can begin (a gzip member header in a .warc.gz, a
`WARC/1.x` line in a plain .warc) and a fresh iterator reads from there; a place that does not
parse is passed over the same way. Every resumption starts further into the file than the last,
so the scan ends. A record already yielded (same WARC-Record-ID) is not yielded again, whatever the
scan finds.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, BinaryIO, Callable, Iterator

from warcio.archiveiterator import ArchiveIterator

GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_LINE = b"\nWARC/1."
SCAN_CHUNK = 1 << 20


def next_record_start(f: BinaryIO, pos: int, gzipped: bool) -> int | None:
    """The first offset >= pos where a record may begin, or None at the end of the file."""
    pattern, lead = (GZIP_MAGIC, 0) if gzipped else (WARC_LINE, 1)  # a WARC line starts after its "\n"
    f.seek(max(0, pos - lead))
    base, tail = f.tell(), b""
    while True:
        chunk = f.read(SCAN_CHUNK)
        if not chunk:
            return None
        data = tail + chunk
        i = data.find(pattern)
        if i >= 0:
            return base - len(tail) + i + lead
        tail = data[-(len(pattern) - 1):]
        base += len(chunk)


def warc_records(f: BinaryIO, skipped: Counter) -> Iterator:
    """Every record of an open WARC file that can be read; each resumption after a corrupt stretch
    counts once as `warc_corrupt:<error>` in `skipped`. The caller reads a record's content before
    asking for the next one, as with ArchiveIterator."""
    f.seek(0)
    gzipped = f.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    seen: set[str] = set()
    start = 0
    while True:
        f.seek(start)
        it = ArchiveIterator(f)
        last = start   # where the last record read begins (the end of the one before it)
        try:
            for rec in it:
                last = max(last, it.offset)
                rid = rec.rec_headers.get_header("WARC-Record-ID")
                if rid is not None:
                    if rid in seen:
                        continue
                    seen.add(rid)
                yield rec
            return
        except Exception as e:  # noqa: BLE001  (a corrupt record: resume after it)
            skipped[f"warc_corrupt:{type(e).__name__}"] += 1
        resume = next_record_start(f, last + 1, gzipped)
        if resume is None:
            return
        start = resume


def converted_records(path: str, types: tuple[str, ...], convert: Callable[[Any], Any],
                      skipped: Counter) -> Iterator[Any]:
    """`convert(record)` for each record of the WARC file at `path` whose type is in `types`, where
    it is not None; other types are counted as `warc_<type>`, and a record that `convert` cannot
    read (a field that does not parse) as `warc_bad_record:<error>`, and the next one is read."""
    with open(path, "rb") as f:
        for rec in warc_records(f, skipped):
            if rec.rec_type not in types:
                skipped[f"warc_{rec.rec_type}"] += 1
                continue
            try:
                out = convert(rec)
            except Exception as e:  # noqa: BLE001  (one malformed record: counted, the next one is read)
                skipped[f"warc_bad_record:{type(e).__name__}"] += 1
                continue
            if out is not None:
                yield out
