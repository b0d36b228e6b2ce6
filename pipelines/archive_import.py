"""Archives into a pages dataset: WARC (and ARC) files, mbox files and message folders, folders
of saved HTML pages.

Each input becomes work items (a file; a byte range of a large .warc.gz) that Beam spreads over
the workers; each item's reader yields PAGES rows and counts, by reason, the records that gave
none. The rows go through the same one-row-per-id step and shard writer as a crawl's pages, and
the counts into the dataset's report (pipelines/crawl_report.py), so a reviewer sees where every
record went.
"""
from __future__ import annotations

import functools
import os
import tempfile
from collections import Counter
from typing import Any, Callable, Iterator, Sequence

import apache_beam as beam

from corpus import objectstore
from corpus.errors import CidermillError
from corpus.provenance import make_provenance
from corpus.schemas import PAGES
from crawl.html_files import iter_html_file_pages, page_files
from crawl.identity import BOT_TOKEN
from crawl.mbox import iter_mbox_pages, mbox_ranges
from crawl.warc import iter_warc_pages
from crawl.warc_records import warc_ranges
from pipelines.beam_options import beam_job
from pipelines.crawl_pipeline import DedupeById
from pipelines.shards_io import WriteShards

READ_ROWS = "(rows read)"   # not a reason: each item's count of distinct pages, beside its drop counts

Reader = Callable[[Any, Counter], Iterator[dict[str, Any]]]


def _read_item(reader: Reader, item):
    """One work item's rows (first of each id kept) and then its counts, as "reason<TAB>n" lines
    on the "skipped" output."""
    seen, skipped = set(), Counter()
    for row in reader(item, skipped):
        if row["id"] in seen:  # the same URL (message) twice in one item: keep the first
            skipped["duplicate_url"] += 1
            continue
        seen.add(row["id"])
        yield row
    skipped[READ_ROWS] += len(seen)
    for reason, n in sorted(skipped.items()):
        yield beam.pvalue.TaggedOutput("skipped", f"{reason}\t{n}")


def import_pages(items: list, reader: Reader, out_dir: str, beam_args: Sequence[str], prov: dict,
                 what: str, progress: bool) -> tuple[str, dict]:
    """Work items -> OUT/pages and its report; (pages dir, report summary)."""
    pages_dir = objectstore.join(out_dir if objectstore.is_remote(out_dir) else os.path.abspath(out_dir), "pages")
    with tempfile.TemporaryDirectory(prefix="cidermill-import-") as tmp:
        with beam_job(beam_args) as p:
            read_out = (p | beam.Create(items) | beam.Reshuffle()
                        | "Read" >> beam.FlatMap(functools.partial(_read_item, reader))
                        .with_outputs("skipped", main="pages"))
            (read_out.pages
             | "OnePerUrl" >> DedupeById()
             | WriteShards(pages_dir, "pages", PAGES, provenance=prov, overwrite=True))
            (read_out.skipped
             | "Counts" >> beam.io.WriteToText(os.path.join(tmp, "skipped"), shard_name_template="-SSSSS-of-NNNNN"))
        skipped: Counter = Counter()
        for name in sorted(os.listdir(tmp)):
            with open(os.path.join(tmp, name), encoding="utf-8") as fh:
                for line in fh:
                    reason, n = line.rstrip("\n").rsplit("\t", 1)
                    skipped[reason] += int(n)
    read_rows = skipped.pop(READ_ROWS, 0)
    from pipelines.crawl_report import write_crawl_report  # noqa: PLC0415
    summary = write_crawl_report(pages_dir, None, record_drops=skipped, read_rows=read_rows)
    if progress:
        print(f"[crawl] imported {summary['fetched']} pages from {what} into {pages_dir}; "
              f"{summary['skipped']} records gave none (by reason in its report)")
    return pages_dir, summary


def _ranged_items(paths: Sequence[str], ranges_of: Callable[[str, int | None], list], split_bytes: int | None):
    """(path, start, end) work items: each range of each file (files in sorted order), so one big
    archive keeps every worker busy."""
    return [(path, a, b) for path in sorted(os.path.abspath(p) for p in paths) for a, b in ranges_of(path, split_bytes)]


def _warc_item(user_agent: str, item, skipped: Counter):
    path, start, end = item
    return iter_warc_pages(path, user_agent, fast=None, skipped=skipped, span=(start, end))


def run_warc_import(files: Sequence[str], out_dir: str, beam_args: Sequence[str] = (), user_agent: str = BOT_TOKEN,
                    progress: bool = True, split_bytes: int | None = None) -> tuple[str, dict]:
    """WARC (or ARC) files -> OUT/pages. A work item is one file, or one range of a large .warc.gz
    (crawl.warc_records.warc_ranges), so one big archive keeps every worker busy."""
    for fpath in files:
        if not os.path.isfile(fpath):
            raise CidermillError(f"{fpath}: WARC file not found")
    prov = make_provenance("pages", {"warc": True, "user_agent": user_agent}, list(files))
    items = _ranged_items(files, warc_ranges, split_bytes)
    return import_pages(items, functools.partial(_warc_item, user_agent), out_dir, beam_args, prov,
                        f"{len(files)} WARC file(s)", progress)


def _mbox_item(keep_quotes: bool, item, skipped: Counter):
    path, start, end = item
    return iter_mbox_pages(path, skipped, keep_quotes=keep_quotes, span=(start, end))


def run_mbox_import(paths: Sequence[str], out_dir: str, beam_args: Sequence[str] = (), keep_quotes: bool = False,
                    progress: bool = True, split_bytes: int | None = None) -> tuple[str, dict]:
    """mbox files (plain or gzip) and folders of one-message files -> OUT/pages, one row per
    message (crawl/mbox.py); a work item is a file or folder, or one range of a large plain mbox
    (crawl.mbox.mbox_ranges), so one big archive keeps every worker busy."""
    for path in paths:
        if not os.path.exists(path):
            raise CidermillError(f"{path}: mail archive not found")
    prov = make_provenance("pages", {"mbox": True, "keep_quotes": keep_quotes}, list(paths))
    items = _ranged_items(paths, mbox_ranges, split_bytes)
    return import_pages(items, functools.partial(_mbox_item, keep_quotes), out_dir, beam_args, prov,
                        f"{len(paths)} mail archive(s)", progress)


FILES_PER_ITEM = 64


def _html_item(root: str, base_url: str | None, user_agent: str, rels, skipped: Counter):
    return iter_html_file_pages(root, list(rels), base_url, user_agent, fast=None, skipped=skipped)


def run_html_import(root: str, out_dir: str, beam_args: Sequence[str] = (), base_url: str | None = None,
                    user_agent: str = BOT_TOKEN, progress: bool = True) -> tuple[str, dict]:
    """A folder of saved HTML pages -> OUT/pages (crawl/html_files.py); work items of
    FILES_PER_ITEM files, so a documentation set of thousands of pages spreads over the workers."""
    if not os.path.isdir(root):
        raise CidermillError(f"{root}: folder of HTML pages not found")
    if base_url and not base_url.lower().startswith(("http://", "https://")):
        raise CidermillError(f"--base-url must be an http(s) URL (got {base_url!r})")
    root = os.path.abspath(root)
    rels = page_files(root)
    if not rels:
        raise CidermillError(f"{root}: no .html/.htm/.xhtml/.shtml files (or .gz of them) under it")
    prov = make_provenance("pages", {"html_dir": True, "base_url": base_url, "user_agent": user_agent}, [root])
    items = [tuple(rels[i:i + FILES_PER_ITEM]) for i in range(0, len(rels), FILES_PER_ITEM)]
    return import_pages(items, functools.partial(_html_item, root, base_url, user_agent), out_dir, beam_args, prov,
                        f"{len(rels)} HTML file(s) under {root}", progress)
