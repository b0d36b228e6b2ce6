"""The text pipeline's row rules without Beam: reading pages, scoring, the corpus-wide decisions
applied to one row, report samples and the report's stage order.

pipelines/text_pipeline.py (Beam) and pipelines/text_local.py (one process) both apply these, so
the two engines decide every row the same way.
"""
from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Any, Iterator

import pyarrow as pa

from corpus import objectstore
from corpus.errors import ConfigError
from corpus.reader import ShardDataset
from corpus.report import ReportStats
from filters import percentile
from filters.chain import PAGE_READ_COLUMNS, TextChain

SAMPLE_TEXT_CHARS = 2000


def rejected_dir_for(out_dir: str, cfg: dict[str, Any]) -> str | None:
    where = (cfg.get("output") or {}).get("rejected", "sibling")
    if where in (None, "none", False):
        return None
    if where == "sibling":
        return (out_dir.rstrip("/") if objectstore.is_remote(out_dir) else os.path.normpath(out_dir)) + ".rejected"
    return str(where)


def where(directory: str) -> str:
    """A dataset's place as one comparable string: the URI on object storage, else the absolute path."""
    return directory.rstrip("/") if objectstore.is_remote(directory) else os.path.abspath(directory)


def page_columns(ds: ShardDataset) -> list[str]:
    """The columns the chain reads that the pages dataset has; a clear error without `text`."""
    columns = [c for c in PAGE_READ_COLUMNS if c in ds.schema.names]
    if "text" not in columns:
        raise ConfigError(f"{ds.directory}: dataset has no `text` column (kind={ds.kind}); expected a pages dataset")
    return columns


def page_dicts(batch: pa.RecordBatch) -> Iterator[dict[str, Any]]:
    """A record batch -> page dicts. Text is read as bytes so invalid UTF-8 reaches the sanitizer
    instead of failing the read; columns missing from the input dataset are simply absent."""
    cols = {}
    for name in batch.schema.names:
        col = batch.column(name)
        if name == "text" and pa.types.is_string(col.type):
            col = col.view(pa.binary())
        elif name == "text" and pa.types.is_large_string(col.type):
            col = col.view(pa.large_binary())
        cols[name] = col.to_pylist()
    for i in range(batch.num_rows):
        yield {k: v[i] for k, v in cols.items()}


def score_page(chain: TextChain, page: dict[str, Any]) -> dict[str, Any]:
    """The whole per-document chain on one page; an exception drops the page with its reason
    (never crash on one record)."""
    try:
        return chain.process(page)
    except Exception as e:  # noqa: BLE001
        row = chain.empty_row(page)
        if not row["id"]:  # deterministic across processes (no hash(): it is salted per process)
            row["id"] = "error-" + hashlib.sha1(repr(sorted(page.items()))[:10000].encode("utf-8", "replace")).hexdigest()
        row["drop_stage"], row["drop_reason"] = "input", f"error:{type(e).__name__}"
        t = page.get("text")
        row["text"] = t[:SAMPLE_TEXT_CHARS].decode("utf-8", "replace") if isinstance(t, bytes) else None
        return row


def alive(row: dict) -> bool:
    return row.get("drop_reason") is None


def apply_quality(row, threshold, cfg):
    """Second pass of top-p%: the global threshold, computed over every surviving document."""
    from filters.quality_model import quality_decision  # noqa: PLC0415
    if not alive(row) or row.get("quality_score") is None:
        return row
    langs = (cfg.get("quality") or {}).get("languages")
    keep, why = quality_decision(row["quality_score"], row.get("language"), threshold,
                                 frozenset(langs) if langs else None, "quality:below_top_percent")
    return row if keep else dict(row, drop_stage="quality", drop_reason=why)


def quality_histogram(rows: list[dict]) -> list[int]:
    """Top-p% quality's first pass over some rows: the percentile histogram of the surviving rows'
    scores (filters/percentile.py; partial histograms merge by adding)."""
    acc = percentile.empty()
    for r in rows:
        if alive(r) and r.get("quality_score") is not None:
            acc = percentile.add(acc, r["quality_score"])
    return acc


def decontam_counts(rows: list[dict]) -> Counter:
    """Decontamination's first pass over some rows: eval-set n-gram hash -> rows that hold it."""
    return Counter(h for r in rows for h in (r.get("_decontam_ngrams") or []))


def frequent_ngrams(chain: TextChain, counts: Counter) -> set:
    """Eval-set n-grams in max_corpus_count+ documents are common phrases and drop nothing."""
    max_count = chain.filters["decontam"].max_corpus_count  # type: ignore[attr-defined]
    return {h for h, n in counts.items() if n >= max_count}


def apply_decontam(row, frequent):
    """Drop a row that holds an eval-set n-gram outside the corpus-wide `frequent` set."""
    hits = row.pop("_decontam_ngrams", None) or []
    if alive(row) and any(h not in frequent for h in hits):
        row = dict(row, drop_stage="decontam", drop_reason="decontam:eval_ngram_overlap")
    return row


def without_decontam(row):
    """The row without its eval-set n-grams; the row itself when it has none (decontamination off)."""
    if "_decontam_ngrams" not in row:
        return row
    out = dict(row)
    del out["_decontam_ngrams"]
    return out


def apply_dedup(row):
    """The dedup marks -> the row's drop reason (the marks themselves are not columns)."""
    out = dict(row)
    out.pop("dedup_keep", None)
    out.pop("dedup_reason", None)
    if not row.get("dedup_keep", True):
        out["drop_stage"], out["drop_reason"] = "dedup", f"dedup:{row.get('dedup_reason') or 'duplicate'}"
    return out


def sample(row: dict) -> tuple[str, str, dict]:
    """A dropped row as a report sample (reason, key, row with its text cut)."""
    small = dict(row)
    if isinstance(small.get("text"), str) and len(small["text"]) > SAMPLE_TEXT_CHARS:
        small["text"] = small["text"][:SAMPLE_TEXT_CHARS] + " [...]"
    return row["drop_reason"], row["id"], small


def ordered_stats(chain: TextChain, acc: ReportStats) -> ReportStats:
    """The merged stats with every configured stage in config order (stages nothing reached still
    show in the funnel)."""
    for name in chain.stage_names:
        acc.stage(name)
    return ReportStats({n: acc.stages[n] for n in chain.stage_names}, acc.figures, acc.info)


def dedup_options(cfg: dict[str, Any]) -> tuple[str, bool, bool, dict[str, Any]]:
    """The config's dedup section -> (mode, exact, near, the transform's other options)."""
    dcfg = dict(cfg.get("dedup") or {})
    exact, near = dcfg.pop("exact", True), dcfg.pop("near", True)
    mode = dcfg.pop("mode", "fused")
    if mode not in ("fused", "keyed"):
        raise ConfigError(f"text config: dedup: mode must be fused or keyed, got {mode!r}")
    return mode, exact, near, dcfg


def report_info(pages_dir: str, rejected_dir: str | None, chain: TextChain) -> dict[str, Any]:
    return {"pipeline": "text", "input": where(pages_dir), "rejected": where(rejected_dir) if rejected_dir else None,
            "stages": chain.stage_names}
