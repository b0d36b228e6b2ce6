"""The text curation pipeline on Beam: pages dataset -> documents dataset + rejected rows + report.

Stages and thresholds come from the config (filters/configs/text.yaml); per-document work is
filters.chain.TextChain (plain Python). On top of it, three corpus-wide steps:
  1. quality top-p%: a score histogram over the surviving documents gives a global threshold
     (first pass), applied as a side input (second pass);
  2. decontamination: eval-set n-gram hits are counted over the corpus; n-grams present in
     `max_corpus_count`+ documents are common phrases and do not drop anything;
  3. dedup: exact + near dedup over the surviving documents (pipelines/dedup_fused.py; with
     `dedup.mode: keyed`, ExactDedup then NearDedup of pipelines/dedup.py).

Where rows go (chosen so trainers read OUT and nothing else, reviewers can re-threshold):
  OUT/                kept documents only (`pyarrow.dataset(OUT, format="ipc")` is the corpus);
  OUT/_report/        stats.json (per-stage funnel, reasons, histograms, PII counts), dropped samples,
                      index.html (rendered by pipelines/report_page.py);
  OUT.rejected/       (default, `output.rejected`) every dropped row, same schema, all scores, with
                      drop_stage/drop_reason; kept + rejected = every input page, so any threshold can
                      be re-applied without re-running. Pages opted out of training have text = null.
"""
from __future__ import annotations

import hashlib
import logging
import os
from typing import Any, Sequence

import apache_beam as beam
import pyarrow as pa

from corpus import objectstore
from corpus.errors import ConfigError
from corpus.provenance import make_provenance
from corpus.reader import ShardDataset
from corpus.report import ReportStats, merge_all, read_report
from filters import percentile
from filters.chain import PAGE_READ_COLUMNS, TextChain, funnel, load_config
from pipelines.report_io import WriteReport
from pipelines.shards_io import WriteShards, read_items

log = logging.getLogger(__name__)
SAMPLE_TEXT_CHARS = 2000


def rejected_dir_for(out_dir: str, cfg: dict[str, Any]) -> str | None:
    where = (cfg.get("output") or {}).get("rejected", "sibling")
    if where in (None, "none", False):
        return None
    if where == "sibling":
        return (out_dir.rstrip("/") if objectstore.is_remote(out_dir) else os.path.normpath(out_dir)) + ".rejected"
    return str(where)


def _where(directory: str) -> str:
    """A dataset's place as one comparable string: the URI on object storage, else the absolute path."""
    return directory.rstrip("/") if objectstore.is_remote(directory) else os.path.abspath(directory)


# ------------------------------------------------------------------------------------ reading

class _ReadPages(beam.DoFn):
    """One shard -> page dicts. Text is read as bytes so invalid UTF-8 reaches the sanitizer
    instead of failing the read; columns missing from the input dataset are simply absent."""

    def __init__(self, directory: str, columns: list[str]):
        self.directory, self.columns = directory, columns

    def setup(self):
        self.dataset = None

    def process(self, item: tuple[int, int, int]):
        if self.dataset is None:  # once per worker (it reads the manifest), not once per item
            self.dataset = ShardDataset(self.directory)
        for batch in self.dataset.iter_slice(*item, columns=self.columns):
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


class ReadPages(beam.PTransform):
    def __init__(self, directory: str):
        super().__init__()
        self.directory = directory
        ds = ShardDataset(directory)  # a clear error before the job starts
        self.columns = [c for c in PAGE_READ_COLUMNS if c in ds.schema.names]
        if "text" not in self.columns:
            raise ConfigError(f"{directory}: dataset has no `text` column (kind={ds.kind}); expected a pages dataset")
        self.items = read_items(ds)  # row ranges of shards: a few large shards still use every worker

    def expand(self, pbegin):
        return (pbegin | "Shards" >> beam.Create(self.items)
                | "Reshuffle" >> beam.Reshuffle()
                | "Read" >> beam.ParDo(_ReadPages(self.directory, self.columns)))


# ---------------------------------------------------------------------------------- stages

class _Score(beam.DoFn):
    """Runs the whole per-document chain; models load once per worker in setup()."""

    def __init__(self, cfg: dict[str, Any]):
        self.cfg = cfg

    def setup(self):
        self.chain = TextChain(self.cfg)

    def process(self, page: dict[str, Any]):
        try:
            yield self.chain.process(page)
        except Exception as e:  # noqa: BLE001  (never crash on one record)
            row = self.chain.empty_row(page)
            if not row["id"]:  # deterministic across processes (no hash(): it is salted per process)
                row["id"] = "error-" + hashlib.sha1(repr(sorted(page.items()))[:10000].encode("utf-8", "replace")).hexdigest()
            row["drop_stage"], row["drop_reason"] = "input", f"error:{type(e).__name__}"
            t = page.get("text")
            row["text"] = t[:SAMPLE_TEXT_CHARS].decode("utf-8", "replace") if isinstance(t, bytes) else None
            yield row


def _alive(row: dict) -> bool:
    return row.get("drop_reason") is None


class _StatsFn(beam.CombineFn):
    def __init__(self, cfg: dict[str, Any]):
        self.cfg = cfg
        self._chain = None

    def _c(self) -> TextChain:
        if self._chain is None:
            self._chain = TextChain(self.cfg)
        return self._chain

    def create_accumulator(self):
        return ReportStats()

    def add_input(self, acc, row):
        funnel(self._c(), row, acc)
        return acc

    def merge_accumulators(self, accs):

        return merge_all(accs)

    def extract_output(self, acc):
        for name in self._c().stage_names:
            acc.stage(name)  # stages nothing reached still show in the funnel
        ordered = ReportStats({n: acc.stages[n] for n in self._c().stage_names}, acc.figures, acc.info)
        return ordered


class _HistFn(beam.CombineFn):
    def create_accumulator(self):
        return percentile.empty()

    def add_input(self, acc, score):
        return percentile.add(acc, score)

    def merge_accumulators(self, accs):
        return percentile.merge(accs)

    def extract_output(self, acc):
        return acc


def _apply_quality(row, threshold, cfg):
    """Second pass of top-p%: the global threshold arrives as a side input."""
    from filters.quality_model import quality_decision  # noqa: PLC0415
    if not _alive(row) or row.get("quality_score") is None:
        return row
    langs = (cfg.get("quality") or {}).get("languages")
    keep, why = quality_decision(row["quality_score"], row.get("language"), threshold,
                                 frozenset(langs) if langs else None, "quality:below_top_percent")
    return row if keep else dict(row, drop_stage="quality", drop_reason=why)


def _apply_decontam(row, frequent):
    hits = row.pop("_decontam_ngrams", None) or []
    if _alive(row) and any(h not in frequent for h in hits):
        row = dict(row, drop_stage="decontam", drop_reason="decontam:eval_ngram_overlap")
    return row


def _apply_dedup(row):
    out = {k: v for k, v in row.items() if k not in ("dedup_keep", "dedup_reason")}
    if not row.get("dedup_keep", True):
        out["drop_stage"], out["drop_reason"] = "dedup", f"dedup:{row.get('dedup_reason') or 'duplicate'}"
    return out


def _sample(row: dict) -> tuple[str, str, dict]:
    small = dict(row)
    if isinstance(small.get("text"), str) and len(small["text"]) > SAMPLE_TEXT_CHARS:
        small["text"] = small["text"][:SAMPLE_TEXT_CHARS] + " [...]"
    return row["drop_reason"], row["id"], small


def build_text_pipeline(p, pages_dir: str, out_dir: str, cfg: dict[str, Any], *, rejected_dir: str | None,
                        provenance: dict[str, Any], overwrite: bool = False, target_bytes: int | None = None):
    """Wire the text pipeline into Beam pipeline `p`."""
    chain = TextChain(cfg)  # validates the config (and model paths) before the job starts
    schema = chain.schema()
    rows = (p | "ReadPages" >> ReadPages(pages_dir)
            | "Score" >> beam.ParDo(_Score(cfg)))

    if chain.top_percent is not None:
        hist = (rows | "QualityAlive" >> beam.Filter(lambda r: _alive(r) and r.get("quality_score") is not None)
                | "QualityScores" >> beam.Map(lambda r: r["quality_score"])
                | "QualityHistogram" >> beam.CombineGlobally(_HistFn()))
        pct = chain.top_percent
        thr = hist | "TopPercent" >> beam.Map(lambda c: percentile.top_percent_threshold(c, pct))
        rows = rows | "QualityDecide" >> beam.Map(_apply_quality, threshold=beam.pvalue.AsSingleton(thr), cfg=cfg)

    if chain.decontam_active:
        # corpus-wide document counts of the eval-set n-grams the documents contain (a combine,
        # so no worker sees more than its share); only n-grams in max_corpus_count+ documents
        # are common phrases, and only those reach the side input: a small set
        max_count = chain.filters["decontam"].max_corpus_count  # type: ignore[attr-defined]
        frequent = (rows | "NgramHits" >> beam.FlatMap(lambda r: [(h, 1) for h in (r.get("_decontam_ngrams") or [])])
                    | "NgramCounts" >> beam.CombinePerKey(sum)
                    | "Frequent" >> beam.Filter(lambda kv: kv[1] >= max_count)
                    | "FrequentKeys" >> beam.Keys()
                    | "FrequentSet" >> beam.combiners.ToSet())
        rows = rows | "DecontamDecide" >> beam.Map(_apply_decontam, frequent=beam.pvalue.AsSingleton(frequent))
    else:
        rows = rows | "NoDecontam" >> beam.Map(lambda r: {k: v for k, v in r.items() if k != "_decontam_ngrams"})

    if "dedup" in chain.stage_names:
        from pipelines.dedup import ExactDedup, NearDedup  # noqa: PLC0415
        from pipelines.dedup_fused import FusedDedup  # noqa: PLC0415
        dcfg = dict(cfg.get("dedup") or {})
        exact, near = dcfg.pop("exact", True), dcfg.pop("near", True)
        mode = dcfg.pop("mode", "fused")
        if mode not in ("fused", "keyed"):
            raise ConfigError(f"text config: dedup: mode must be fused or keyed, got {mode!r}")
        alive = rows | "Alive" >> beam.Filter(_alive)
        dead = rows | "Dead" >> beam.Filter(lambda r: not _alive(r))
        marked = alive
        try:
            if mode == "fused":
                marked = marked | "Dedup" >> FusedDedup(text_field="text", key_field="id", exact=exact, near=near,
                                                         **dcfg)
            if mode == "keyed" and exact:
                marked = marked | "ExactDedup" >> ExactDedup(text_field="text", key_field="id")
            if mode == "keyed" and near:
                marked = marked | "NearDedup" >> NearDedup(text_field="text", key_field="id", **dcfg)
        except TypeError as e:
            raise ConfigError(f"text config: dedup: {e}") from None
        marked = marked | "DedupDecide" >> beam.Map(_apply_dedup)
        rows = (marked, dead) | "AllRows" >> beam.Flatten()

    kept = rows | "Kept" >> beam.Filter(_alive)
    dropped = rows | "Dropped" >> beam.Filter(lambda r: not _alive(r))
    tb = {"target_bytes": target_bytes} if target_bytes else {}
    kept | "WriteDocuments" >> WriteShards(out_dir, "documents", schema, provenance=provenance,
                                            overwrite=overwrite, **tb)
    if rejected_dir:
        rprov = dict(provenance, job=(provenance.get("job") or "") + "-rejected")
        dropped | "WriteRejected" >> WriteShards(rejected_dir, "documents-rejected", schema, provenance=rprov,
                                                  overwrite=overwrite, **tb)
    stats = rows | "Stats" >> beam.CombineGlobally(_StatsFn(cfg))
    samples = dropped | "Samples" >> beam.Map(_sample)
    info = {"pipeline": "text", "input": _where(pages_dir),
            "rejected": _where(rejected_dir) if rejected_dir else None,
            "stages": chain.stage_names}
    k = int((cfg.get("output") or {}).get("samples_per_reason", 20))
    (stats, samples) | "WriteReport" >> WriteReport(out_dir, samples_per_reason=k, info=info)


def run_text(pages_dir: str, out_dir: str, config_path: str | None = None, beam_args: Sequence[str] | None = None,
             *, rejected_dir: str | None = "", overwrite: bool = False, overrides: dict | None = None,
             target_bytes: int | None = None, command: list[str] | None = None) -> dict[str, Any]:
    """Run the text pipeline; returns a summary {rows_in, kept, dropped: {reason: n}, out_dir, ...}.

    `rejected_dir=""` takes the config's choice (default OUT.rejected); None writes no rejected rows."""
    from pipelines.beam_options import pipeline_options  # noqa: PLC0415

    cfg = load_config(config_path, overrides)
    if rejected_dir == "":
        rejected_dir = rejected_dir_for(out_dir, cfg)
    if _where(pages_dir) == _where(out_dir):
        raise ConfigError("--out must differ from --in")
    prov = make_provenance("documents", config=cfg, inputs=[pages_dir], command=command)
    log.info("text: %s -> %s (rejected rows: %s)", pages_dir, out_dir, rejected_dir or "not written")
    with beam.Pipeline(options=pipeline_options(beam_args)) as p:
        build_text_pipeline(p, pages_dir, out_dir, cfg, rejected_dir=rejected_dir, provenance=prov,
                            overwrite=overwrite, target_bytes=target_bytes)
    from pipelines.report_page import render_report  # noqa: PLC0415
    html_path = render_report(out_dir)
    stats = read_report(out_dir)
    first = stats.stages[cfg["stages"][0]]
    dropped: dict[str, int] = {}
    for st in stats.stages.values():
        for reason, n in st.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
    kept = ShardDataset(out_dir).manifest.rows
    return {"rows_in": first.rows_in, "kept": kept, "dropped": dict(sorted(dropped.items())),
            "out_dir": out_dir, "rejected_dir": rejected_dir, "report": html_path,
            "funnel": {n: {"in": s.rows_in, "kept": s.kept} for n, s in stats.stages.items()}}
