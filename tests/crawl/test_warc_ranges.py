"""A large .warc.gz is read in byte ranges by parallel workers: the ranges together give each
record of the file exactly once, damaged members included, whatever the range size."""
from collections import Counter

import pytest

from crawl.warc import iter_warc_pages
from crawl.warc_records import warc_ranges
from test_warc_corrupt import N, _long_body, _url, _warc


def _read(path, span=(0, None)):
    skipped: Counter = Counter()
    return [r["url"] for r in iter_warc_pages(str(path), skipped=skipped, span=span)], skipped


@pytest.mark.parametrize("split", [333, 7777, 20000, 40000, 10 ** 9])
def test_ranges_together_read_each_record_once(tmp_path, split):
    data, off = _warc(True, body=_long_body)
    bad = bytearray(data)
    mid = off[4] + 3 * (off[5] - off[4]) // 4
    for j in range(8):
        bad[mid + j] ^= 0xA5                       # record 4 damaged past its first block
    bad[off[6]:off[6] + 4] = b"JUNK"               # record 6's gzip header gone
    path = tmp_path / "big.warc.gz"
    path.write_bytes(bytes(bad))
    whole, whole_skipped = _read(path)
    assert whole == [_url(i) for i in range(N) if i not in (4, 6)]
    ranges = warc_ranges(str(path), split)
    assert ranges[0][0] == 0 and (len(ranges) == 1) == (split >= len(data))
    assert all(a < b and b == c for (a, b), (c, _) in zip(ranges, ranges[1:]))
    parts, skipped = [], Counter()
    for span in ranges:
        urls, sk = _read(path, span)
        parts += urls
        skipped += sk
    assert parts == whole
    assert skipped == whole_skipped     # each damaged member counted once, by one range


def test_plain_and_small_files_are_one_range(tmp_path):
    data, _ = _warc(False)
    plain = tmp_path / "p.warc"
    plain.write_bytes(data)
    assert warc_ranges(str(plain), 100) == [(0, None)]
    gz = tmp_path / "small.warc.gz"
    gz.write_bytes(_warc(True)[0])
    assert warc_ranges(str(gz)) == [(0, None)]


def test_import_split_in_ranges_on_two_workers_equals_the_whole_file_import(tmp_path):
    """`cidermill crawl --warc` on one large file: the same pages dataset and drop counts whether
    the file is one work item or many ranges spread over worker processes."""
    from corpus.reader import ShardDataset  # noqa: PLC0415
    from corpus.report import read_report  # noqa: PLC0415
    from pipelines.archive_import import run_warc_import  # noqa: PLC0415
    data, off = _warc(True, body=_long_body)
    bad = bytearray(data)
    bad[off[3] + 200:off[3] + 208] = bytes(8)
    path = tmp_path / "one.warc.gz"
    path.write_bytes(bytes(bad))
    results = []
    for split, args in ((None, []), (20000, ["--direct_num_workers=2", "--direct_running_mode=multi_processing"])):
        out = str(tmp_path / f"out-{split}")
        pages_dir, summary = run_warc_import([str(path)], out, args, progress=False, split_bytes=split)
        rows = sorted((r["url"], r["text"]) for r in ShardDataset(pages_dir).iter_rows(["url", "text"]))
        results.append((rows, read_report(pages_dir).info["crawl"]["skipped_by_reason"]))
    assert len(warc_ranges(str(path), 20000)) > 5
    assert results[0] == results[1]
    assert [u for u, _ in results[0][0]] == sorted(_url(i) for i in range(N) if i != 3)
