"""A corrupt record in a WARC costs that record only: reading resumes at the next one, for pages
(crawl/warc.py) and images (crawl/image_warc.py), and nothing is read twice."""
import gzip
import io
import random
from collections import Counter

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawl.image_warc import iter_warc_images
from crawl.warc import iter_warc_pages
from crawl.warc_records import next_record_start

N = 8
WORDS = ("apple cider press orchard barrel harvest autumn village market bottle yeast sugar cellar "
         "wooden crate juice").split()


def _body(i: int) -> bytes:
    rng = random.Random(i)
    text = " ".join(rng.choice(WORDS) for _ in range(120))
    return f"<html><head><title>Page {i}</title></head><body><article><p>{text}</p></article></body></html>".encode()


def _warc(gz: bool, status: dict | None = None, body=None) -> tuple[bytes, list[int]]:
    """N HTML response records, the same bytes on every run (fixed dates and record IDs, so the
    damage below always lands in the same place); the offsets where each record starts."""
    buf, offsets = io.BytesIO(), []
    w = WARCWriter(buf, gzip=gz)
    for i in range(N):
        offsets.append(buf.tell())
        hdrs = StatusAndHeaders((status or {}).get(i, "200 OK"), [("Content-Type", "text/html")], protocol="HTTP/1.1")
        fixed = {"WARC-Date": "2026-01-02T03:04:05Z", "WARC-Record-ID": f"<urn:uuid:00000000-0000-0000-0000-{i:012d}>"}
        w.write_record(w.create_warc_record(f"http://cider.test/{i}.html", "response",
                                            payload=io.BytesIO((body or _body)(i)), http_headers=hdrs,
                                            warc_headers_dict=fixed))
    return buf.getvalue(), offsets + [len(buf.getvalue())]


def _pages(tmp_path, data: bytes, name: str) -> tuple[list[str], Counter]:
    path = tmp_path / name
    path.write_bytes(data)
    skipped: Counter = Counter()
    urls = [r["url"] for r in iter_warc_pages(str(path), skipped=skipped)]
    return urls, skipped


def _url(i: int) -> str:
    return f"http://cider.test/{i}.html"


@pytest.mark.parametrize("gz", [True, False])
def test_a_garbled_record_costs_that_record_only(tmp_path, gz):
    data, off = _warc(gz)
    assert _pages(tmp_path, data, "clean.warc")[0] == [_url(i) for i in range(N)]
    bad = bytearray(data)
    bad[off[2]:off[2] + 10] = b"X" * 10          # record 2's first bytes (gzip header / WARC line)
    mid = (off[5] + off[6]) // 2
    bad[mid:mid + 24] = bytes(24)                  # inside record 5
    urls, skipped = _pages(tmp_path, bytes(bad), "bad.warc")
    assert _url(2) not in urls and len(urls) == len(set(urls))
    assert {_url(i) for i in (0, 1, 3, 4, 6, 7)} <= set(urls)   # the old reader stopped at record 2
    assert sum(n for k, n in skipped.items() if k.startswith("warc_corrupt:")) >= 1
    again, _ = _pages(tmp_path, bytes(bad), "bad2.warc")
    assert again == urls


def test_every_single_damaged_member_loses_only_its_record(tmp_path):
    """Random damage inside one gzip member, at 30 places: the other records all come back, once each."""
    data, off = _warc(True)
    rng = random.Random(7)
    for trial in range(30):
        k = rng.randrange(N)
        pos = rng.randrange(off[k], off[k + 1] - 8)
        bad = bytearray(data)
        for j in range(8):
            bad[pos + j] ^= 0xA5
        urls, _ = _pages(tmp_path, bytes(bad), f"t{trial}.warc.gz")
        assert len(urls) == len(set(urls)), (trial, k, pos)
        assert {_url(i) for i in range(N) if i != k} <= set(urls), (trial, k, pos)


def _long_body(i: int) -> bytes:
    rng = random.Random(i)
    text = " ".join(f"{rng.choice(WORDS)}{rng.randrange(1000)}" for _ in range(12000))
    return f"<html><head><title>Page {i}</title></head><body><article><p>{text}</p></article></body></html>".encode()


def test_damage_deep_inside_a_long_record_costs_that_record_only(tmp_path):
    """A member that fails past warcio's first 16 KiB block used to read as a short record and end
    the file with no error: the damaged record came back cut short and the ones after it were lost."""
    data, off = _warc(True, body=_long_body)
    mid = off[2] + 3 * (off[3] - off[2]) // 4
    assert mid - off[2] > 16384
    bad = bytearray(data)
    for j in range(8):
        bad[mid + j] ^= 0xA5
    urls, skipped = _pages(tmp_path, bytes(bad), "long.warc.gz")
    assert urls == [_url(i) for i in range(N) if i != 2]
    assert skipped["warc_corrupt:CorruptMember"] == 1


@pytest.mark.parametrize("delta", [-400, -1, 1, 5, 2000, 10 ** 6])
@pytest.mark.parametrize("k", [0, 3, N - 1])
def test_a_wrong_content_length_in_a_plain_warc_costs_that_record_only(tmp_path, k, delta):
    """A plain WARC has no checksum: a Content-Length that grew read as a record holding the next
    one (lost), and one that shrank as a record cut short (kept damaged). The record is now checked
    against the blank lines and the next `WARC/` line that must follow it."""
    data, off = _warc(False)
    clean = {r["url"]: r["text"] for r in iter_warc_pages(str(_write(tmp_path, data, "clean.warc")))}
    rec = data[off[k]:off[k + 1]]
    i = rec.index(b"Content-Length: ") + len(b"Content-Length: ")
    j = rec.index(b"\r\n", i)
    rec = rec[:i] + str(int(rec[i:j]) + delta).encode() + rec[j:]
    path = _write(tmp_path, data[:off[k]] + rec + data[off[k + 1]:], "bad.warc")
    skipped: Counter = Counter()
    rows = list(iter_warc_pages(str(path), skipped=skipped))
    assert sorted(r["url"] for r in rows) == sorted(_url(i) for i in range(N) if i != k)
    assert all(r["text"] == clean[r["url"]] for r in rows)
    assert skipped["warc_corrupt:BadContentLength"] == 1


def test_a_damaged_block_in_a_plain_warc_is_caught_by_its_digest(tmp_path):
    """A plain WARC has no CRC: a changed byte inside a body read as good text. The record's
    WARC-Block-Digest (warcio, wget and Common Crawl write one) now catches it."""
    data, off = _warc(False)
    bad = bytearray(data)
    at = data.index(b"<article><p>", off[4]) + 20
    bad[at] ^= 0x01                                  # one letter of record 4's text
    urls, skipped = _pages(tmp_path, bytes(bad), "digest.warc")
    assert urls == [_url(i) for i in range(N) if i != 4]
    assert skipped["warc_corrupt:BlockDigest"] == 1
    # without a digest line there is nothing to check against: the record is kept as it reads
    rec = bytes(bad[off[4]:off[5]])
    line = rec[rec.index(b"WARC-Block-Digest:"):]
    line = line[:line.index(b"\r\n") + 2]
    undigested = bytes(bad[:off[4]]) + rec.replace(line, b"") + bytes(bad[off[5]:])
    urls, skipped = _pages(tmp_path, undigested, "nodigest.warc")
    assert urls == [_url(i) for i in range(N)] and not skipped


def test_a_plain_warc_whose_next_record_line_is_garbled_keeps_the_record_before(tmp_path):
    data, off = _warc(False)
    bad = data[:off[3]] + b"XXXXXXXX" + data[off[3] + 8:]
    urls, skipped = _pages(tmp_path, bad, "next.warc")
    assert urls == [_url(i) for i in range(N) if i != 3]
    assert "warc_corrupt:BadContentLength" not in skipped


def _write(tmp_path, data: bytes, name: str):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_damaged_first_gzip_header_is_still_read_as_gzip(tmp_path):
    data, _ = _warc(True)
    bad = bytearray(data)
    bad[0] ^= 0xFF
    urls, skipped = _pages(tmp_path, bytes(bad), "head.warc.gz")
    assert urls == [_url(i) for i in range(1, N)]
    assert sum(n for k, n in skipped.items() if k.startswith("warc_corrupt:")) == 1


@pytest.mark.parametrize("prefetch", [1 << 20, 700])
def test_a_warc_gzipped_whole_as_one_member_reads_every_record(tmp_path, monkeypatch, prefetch):
    """Some tools gzip the whole file instead of each record: one member, read in full whether it
    is checked before parsing or (past PREFETCH_BYTES) streamed."""
    monkeypatch.setattr("crawl.warc_records.PREFETCH_BYTES", prefetch)
    plain, _ = _warc(False)
    urls, skipped = _pages(tmp_path, gzip.compress(plain), "whole.warc.gz")
    assert urls == [_url(i) for i in range(N)] and not skipped
    cut, skipped = _pages(tmp_path, gzip.compress(plain)[:-100], "whole-cut.warc.gz")
    # checked whole, the cut member gives nothing; streamed, the records before the cut come back
    assert cut == ([] if prefetch > len(plain) else [_url(i) for i in range(len(cut))])
    assert len(cut) < N and skipped["warc_corrupt:CorruptMember"] == 1


def test_a_record_that_does_not_parse_is_counted_and_the_next_is_read(tmp_path):
    data, _ = _warc(True, status={3: "2OO OK"})   # a status code that is not a number
    urls, skipped = _pages(tmp_path, data, "status.warc.gz")
    assert urls == [_url(i) for i in range(N) if i != 3]
    assert skipped["warc_bad_record:ValueError"] == 1


def test_truncated_file_keeps_every_whole_record(tmp_path):
    data, off = _warc(True)
    urls, _ = _pages(tmp_path, data[:off[6] + 40], "cut.warc.gz")
    assert urls == [_url(i) for i in range(6)]


def test_images_resume_after_a_corrupt_record(tmp_path):
    buf, offsets = io.BytesIO(), []
    w = WARCWriter(buf, gzip=True)
    for i in range(6):
        offsets.append(buf.tell())
        hdrs = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(f"http://cider.test/{i}.png", "response",
                                            payload=io.BytesIO(b"\x89PNG\r\n\x1a\n" + bytes([i]) * 300),
                                            http_headers=hdrs))
    bad = bytearray(buf.getvalue())
    bad[offsets[1]:offsets[1] + 10] = b"Z" * 10
    path = tmp_path / "img.warc.gz"
    path.write_bytes(bytes(bad))
    skipped: Counter = Counter()
    urls = [r["url"] for r in iter_warc_images(str(path), skipped=skipped)]
    assert urls == [f"http://cider.test/{i}.png" for i in (0, 2, 3, 4, 5)]
    assert sum(n for k, n in skipped.items() if k.startswith("warc_corrupt:")) == 1


def test_next_record_start_across_scan_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr("crawl.warc_records.SCAN_CHUNK", 5)
    data = b"garbage\nmore\nWARC/1.1\r\nrest"
    f = io.BytesIO(data)
    assert next_record_start(f, 1, gzipped=False) == data.index(b"WARC/1.1")
    assert next_record_start(f, data.index(b"WARC/1.1") + 1, gzipped=False) is None
    g = io.BytesIO(b"ab\x1f\x8b\x08cd\x1f\x8b\x08")
    assert next_record_start(g, 0, gzipped=True) == 2
    assert next_record_start(g, 3, gzipped=True) == 7
