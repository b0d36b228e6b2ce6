"""WARC records that survive a corrupt one: the reader resumes at the next record instead of
stopping, and never yields a record whose bytes are damaged where that can be known.

warcio's ArchiveIterator handles damage badly. It raises on the first record it cannot parse and
cannot go on, so one bad record in a Common Crawl file of 40,000 used to lose every record after
it. Worse, a gzip member that fails partway through (past its first 16 KiB block) is read as a
short record and ends the file without any error, and a member that fails in its first block
switches the rest of the file to "not compressed", which reads as one garbage record.

So in a .warc.gz this module decompresses the gzip members itself, one per record as WARC files
are written: a member up to PREFETCH_BYTES is inflated whole, its CRC checked, before warcio parses
its record from the clean bytes; a larger one is streamed, and a failure raises. A member that
fails costs that member: the file is scanned from just after its start for the next gzip header,
and reading goes on there. In a plain .warc the scan looks for the next `WARC/1.x` line (in a plain
ARC, the next ARC header line: URL, IP, 14-digit date, ..., length) after the
last record read. Each resumption starts further into the file than the last, so the scan ends.
A record already yielded (same WARC-Record-ID) is not yielded again, whatever the scan finds.
With no CRC in a plain .warc, each record is checked against its Content-Length and its
WARC-Block-Digest instead (_plain_record_problem).
ARC files, the format before WARC, come through warcio's conversion as WARC records.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import zlib
from collections import Counter
from typing import Any, BinaryIO, Callable, Iterator

from warcio.archiveiterator import ArchiveIterator

GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_LINE = b"\nWARC/1."
HEADER_LIMIT = 1 << 16     # a WARC record header longer than this is taken as damage
ARC_START = b"filedesc://"
ARC_HEADER_MAX = 4096      # an ARC header line is one line: URL, IP, date, type, ..., length
_ARC_HEADER = re.compile(rb"\n[a-zA-Z][a-zA-Z0-9+.-]{0,15}:[^\s]{1,4000} [^\s]{1,64} \d{14} [^\n]{0,1000}?\b\d{1,15}\r?\n")
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d{1,15})[ \t]*\r\n", re.I)
SCAN_CHUNK = 1 << 20
READ_CHUNK = 1 << 16
# Larger than any record the readers keep (10 MiB pages, 20 MiB images) with its headers.
PREFETCH_BYTES = 32 << 20
# The span of a .warc.gz one worker reads (warc_ranges): a Common Crawl file (about 1 GiB) in 16.
SPLIT_BYTES = 64 << 20


class CorruptMember(Exception):
    """A gzip member that does not inflate, fails its CRC or length check, or is cut short."""


def next_record_start(f: BinaryIO, pos: int, gzipped: bool) -> int | None:
    """The first offset >= pos where a record may begin, or None at the end of the file."""
    pattern, lead = (GZIP_MAGIC, 0) if gzipped else (WARC_LINE, 1)  # a WARC line starts after its "\n"
    at = _scan(f, max(0, pos - lead), lambda data: data.find(pattern), len(pattern) - 1)
    return None if at is None else at + lead


def _scan(f: BinaryIO, pos: int, find: Callable[[bytes], int], overlap: int) -> int | None:
    """The offset of the first match of `find` (index in a buffer, or -1) from `pos` on, reading
    SCAN_CHUNK at a time with `overlap` bytes kept across chunks; None at the end of the file."""
    f.seek(pos)
    base, tail = pos, b""
    while True:
        chunk = f.read(SCAN_CHUNK)
        if not chunk:
            return None
        data = tail + chunk
        i = find(data)
        if i >= 0:
            return base - len(tail) + i
        tail = data[-overlap:]
        base += len(chunk)


class GzipMember:
    """One gzip member of `f` from `start`, as a read-only stream of its inflated bytes, for
    warcio to parse. Inflation errors raise CorruptMember rather than ending the stream quietly;
    `end` is where the member's compressed bytes stop, once it has been read to its end."""

    def __init__(self, f: BinaryIO, start: int, prefetch: int | None = None):
        self._f, self._pos = f, start
        self._z = zlib.decompressobj(31)
        self._served = 0
        self.end: int | None = None
        self._error: CorruptMember | None = None
        parts, size, prefetch = [], 0, PREFETCH_BYTES if prefetch is None else prefetch
        while size < prefetch:          # small members (nearly all) are checked whole before parsing
            out = self._inflate(prefetch - size)
            if not out:
                break
            parts.append(out)
            size += len(out)
        self._buf, self._at = b"".join(parts), 0

    def _inflate(self, limit: int) -> bytes:
        """Up to `limit` more inflated bytes; b"" once the member has ended."""
        if self._error is not None:      # never read on from a failed member
            raise self._error
        while self.end is None:
            data = self._z.unconsumed_tail
            if not data:
                self._f.seek(self._pos)
                data = self._f.read(READ_CHUNK)
                if not data:
                    self._error = CorruptMember("gzip member cut short by the end of the file")
                    raise self._error
                self._pos += len(data)
            try:
                out = self._z.decompress(data, limit)
            except zlib.error as e:
                self._error = CorruptMember(str(e))
                raise self._error from None
            if self._z.eof:
                self.end = self._pos - len(self._z.unused_data) - len(self._z.unconsumed_tail)
            if out:
                return out
        return b""

    def read(self, size: int = -1) -> bytes:
        if self._at < len(self._buf):
            n = len(self._buf) - self._at if size is None or size < 0 else size
            out = self._buf[self._at:self._at + n]
            self._at += len(out)
        else:
            out = self._inflate(READ_CHUNK if size is None or size < 0 else max(size, 1))
        self._served += len(out)
        return out

    def tell(self) -> int:
        return self._served


def _is_gzipped(f: BinaryIO) -> bool:
    """Whether the file is gzip members. A file whose first bytes are damaged is judged by which
    comes first: a gzip header or a WARC line."""
    f.seek(0)
    head = f.read(len(GZIP_MAGIC))
    if head == GZIP_MAGIC or not head or b"WARC/".startswith(head) or b"filedesc:".startswith(head):
        return head == GZIP_MAGIC        # (an ARC file starts with its filedesc record)
    gz, plain = next_record_start(f, 0, True), next_record_start(f, 0, False)
    return gz is not None and (plain is None or gz < plain)


def warc_ranges(path: str, split_bytes: int | None = None) -> list[tuple[int, int | None]]:
    """Byte ranges of a WARC file that can be read apart, for parallel workers: fixed spans of
    `split_bytes` in a .warc.gz larger than that (the same spans whatever the worker count), the
    whole file otherwise. A range holds the records whose gzip member starts inside it."""
    split = SPLIT_BYTES if split_bytes is None else split_bytes
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if size <= split or not _is_gzipped(f):
            return [(0, None)]
    return [(a, min(a + split, size)) for a in range(0, size, split)]


def warc_records(f: BinaryIO, skipped: Counter, start: int = 0, end: int | None = None) -> Iterator:
    """Every record of an open WARC file that can be read (of the members starting in [start,
    end) of a .warc.gz); each resumption after a corrupt stretch counts once as
    `warc_corrupt:<error>` in `skipped`. The caller reads a record's content before asking for the
    next one, as with ArchiveIterator."""
    seen: set[str] = set()

    def fresh(rec) -> bool:
        rid = rec.rec_headers.get_header("WARC-Record-ID")
        if rid is None:
            return True
        if rid in seen:
            return False
        seen.add(rid)
        return True

    if _is_gzipped(f):
        yield from _gzip_records(f, skipped, fresh, start, end)
    elif start == 0:
        yield from _plain_records(f, skipped, fresh)
    # a plain WARC is one range (warc_ranges): any later range of it holds nothing


def _gzip_records(f: BinaryIO, skipped: Counter, fresh: Callable[[Any], bool], first: int,
                  end: int | None) -> Iterator:
    # A range after the first begins mid-member: the scan to the next gzip header may find those
    # three bytes inside compressed data, which then fail as a member. Until a member has read
    # well, a failure counts as corrupt only where the rest of a gzip header is plausible too.
    aligned = first == 0
    start = next_record_start(f, first, gzipped=True) if first else 0
    while start is not None and (end is None or start < end):
        try:
            member = GzipMember(f, start)
            for rec in ArchiveIterator(member, arc2warc=True):
                aligned = True
                if fresh(rec):
                    yield rec
        except Exception as e:  # noqa: BLE001  (a corrupt member: resume at the next one)
            if aligned or _plausible_header(f, start):
                skipped[f"warc_corrupt:{type(e).__name__}"] += 1
            start = next_record_start(f, start + 1, gzipped=True)
            continue
        if member.end is None:       # warcio stopped before the member's end: nothing more to read
            return
        aligned = True      # the member after this one is checked here even past `end`: its
        # header, if damaged, is counted once, by this range (the next range cannot tell)
        f.seek(member.end)
        head = f.read(len(GZIP_MAGIC))
        if head == GZIP_MAGIC or not head:
            start = member.end if head else None
        else:                        # not a gzip header where one should start: a damaged member
            skipped["warc_corrupt:BadGzipHeader"] += 1
            start = next_record_start(f, member.end, gzipped=True)


def _plausible_header(f: BinaryIO, pos: int) -> bool:
    """Whether the 10 bytes at `pos` read as a gzip member header (RFC 1952: reserved flag bits
    clear, a known XFL and OS byte), not just its first three bytes found in compressed data."""
    f.seek(pos)
    h = f.read(10)
    return len(h) == 10 and h.startswith(GZIP_MAGIC) and not h[3] & 0xE0 and h[8] in (0, 2, 4) \
        and (h[9] <= 13 or h[9] == 255)


def _plain_records(f: BinaryIO, skipped: Counter, fresh: Callable[[Any], bool]) -> Iterator:
    f.seek(0)
    head = f.read(16)
    arc = head.startswith(ARC_START)
    fd = _descriptor(f) if head.lstrip(b"\r\n").startswith(b"WARC/") else None   # records to check
    size = os.fstat(fd).st_size if fd is not None else 0
    start = 0
    while True:
        f.seek(start)
        it = ArchiveIterator(f, arc2warc=True)
        last = start   # where the last record read begins (the end of the one before it)
        try:
            for rec in it:
                last = it.offset
                problem = _plain_record_problem(fd, size, last) if fd is not None else None
                if problem == "BadContentLength":
                    skipped["warc_corrupt:BadContentLength"] += 1
                    break
                if problem:                  # whole where it stands, but its bytes are damaged
                    skipped[f"warc_corrupt:{problem}"] += 1
                    continue
                if fresh(rec):
                    yield rec
            else:
                return
        except Exception as e:  # noqa: BLE001  (a corrupt record: resume after it)
            skipped[f"warc_corrupt:{type(e).__name__}"] += 1
        resume = next_arc_record_start(f, last + 1) if arc else next_record_start(f, last + 1, gzipped=False)
        if resume is None:
            return
        start = resume


def next_arc_record_start(f: BinaryIO, pos: int) -> int | None:
    """The first offset >= pos where an ARC record's header line begins (after a newline: URL,
    IP, 14-digit date, ..., length; versions 1 and 2), or None at the end of the file."""
    def find(data: bytes) -> int:
        m = _ARC_HEADER.search(data)
        return -1 if m is None else m.start()

    at = _scan(f, max(0, pos - 1), find, ARC_HEADER_MAX)
    return None if at is None else at + 1


def _descriptor(f: BinaryIO) -> int | None:
    """The file descriptor to pread from (which leaves the position warcio reads from alone), or
    None for an in-memory file."""
    try:
        return f.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _plain_record_problem(fd: int, size: int, pos: int) -> str | None:
    """What is wrong with the plain WARC record at `pos` of the file `fd` of `size` bytes, or None.

    A plain WARC has no checksum over the file, so two checks stand in for gzip's CRC:
    - "BadContentLength": the block does not end where its Content-Length says. It must be
      followed by the two CRLFs that close a record (the standard's form), then the next record's
      `WARC/` line or the end of the file; warcio reads a length that grew as a record holding
      part of the next one, and one that shrank as a record cut short.
    - "BlockDigest": the block's bytes do not match its WARC-Block-Digest (sha1, sha256, sha512 or
      md5; base32, hex or base64), where the record has one (revisits and segments excepted).
    Read with pread on the file's descriptor, which leaves the position warcio reads from alone."""
    head = os.pread(fd, HEADER_LIMIT, pos)
    lead = len(head) - len(head.lstrip(b"\r\n"))
    end = head.find(b"\r\n\r\n", lead)
    if end < 0:                              # no end of header in HEADER_LIMIT bytes
        return "BadContentLength"
    m = _CONTENT_LENGTH.search(head, lead, end + 2)
    if m is None:    # WARC/1.x requires the field; an older version (0.17) puts the length elsewhere
        return "BadContentLength" if head.startswith(b"WARC/1.", lead) else None
    block_start = pos + end + 4
    block_end = block_start + int(m.group(1))
    if not _closed_at(fd, size, block_start, block_end):
        return "BadContentLength"
    digest = _block_digest(head[lead:end + 2])
    if digest is not None and not _digest_matches(fd, block_start, block_end, *digest):
        return "BlockDigest"
    return None


def _closed_at(fd: int, size: int, block_start: int, block_end: int) -> bool:
    if block_end > size:                     # cut short, or a length past the end of the file
        return False
    after = os.pread(fd, 64, block_end)
    if not after:                            # the file ends with the block (its closing lines cut)
        return True
    if not after.startswith(b"\r\n\r\n"):    # no record closes here: the length is wrong
        return False
    rest = after[4:].lstrip(b"\r\n")
    if (not rest and len(after) < 64) or rest.startswith(b"WARC/"):
        return True
    # Closed where the length says, but no record follows: the next record's own line is damaged,
    # unless the length grew over a whole record onto an HTTP header's blank line.
    return b"\r\n\r\nWARC/1." not in os.pread(fd, block_end - block_start, block_start)


_DIGEST_SIZES = {"sha1": 20, "sha256": 32, "sha512": 64, "md5": 16}
_BLOCK_DIGEST = re.compile(rb"\r\nwarc-block-digest:[ \t]*([a-z0-9-]+):[ \t]*([A-Za-z0-9+/=_-]+)[ \t]*\r\n", re.I)
_NOT_CHECKED = re.compile(rb"\r\n(warc-type:[ \t]*revisit|warc-segment-number:)", re.I)


def _block_digest(header: bytes) -> tuple[str, bytes] | None:
    """(hashlib name, digest bytes) of a header's WARC-Block-Digest, or None where there is none to
    check: no such line, an algorithm or encoding not known here, a revisit or a segment."""
    m = _BLOCK_DIGEST.search(header)
    if m is None or _NOT_CHECKED.search(header):
        return None
    algo = m.group(1).decode().lower().replace("-", "")
    size, value = _DIGEST_SIZES.get(algo), m.group(2).decode()
    if size is None:
        return None
    for decode in (bytes.fromhex, lambda v: base64.b32decode(v.upper() + "=" * (-len(v) % 8)), base64.b64decode):
        try:
            raw = decode(value)
        except (ValueError, binascii.Error):
            continue
        if len(raw) == size:
            return algo, raw
    return None


def _digest_matches(fd: int, start: int, end: int, algo: str, want: bytes) -> bool:
    h = hashlib.new(algo)
    while start < end:
        chunk = os.pread(fd, min(READ_CHUNK * 16, end - start), start)
        if not chunk:
            return False
        h.update(chunk)
        start += len(chunk)
    return h.digest() == want


def converted_records(path: str, types: tuple[str, ...], convert: Callable[[Any], Any],
                      skipped: Counter, span: tuple[int, int | None] = (0, None)) -> Iterator[Any]:
    """`convert(record)` for each record of the WARC file at `path` (of the range `span`, from
    warc_ranges) whose type is in `types`, where it is not None; other types are counted as
    `warc_<type>`, and a record that `convert` cannot read (a field that does not parse) as
    `warc_bad_record:<error>`, and the next one is read."""
    with open(path, "rb") as f:
        for rec in warc_records(f, skipped, *span):
            if rec.rec_type not in types:
                skipped[f"warc_{rec.rec_type}"] += 1
                continue
            try:
                out = convert(rec)
            except CorruptMember:   # counted once, as warc_corrupt, when the reader resumes
                continue
            except Exception as e:  # noqa: BLE001  (one malformed record: counted, the next one is read)
                skipped[f"warc_bad_record:{type(e).__name__}"] += 1
                continue
            if out is not None:
                yield out
