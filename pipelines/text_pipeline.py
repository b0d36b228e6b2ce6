"""The text curation pipeline on Beam: pages dataset -> documents dataset + rejected rows + report.

Stages and thresholds come from the config (filters/configs/text.yaml); per-document work is
filters.chain.TextChain (plain Python). On top of it, three corpus-wide steps:
  1. quality top-p%: a score histogram over the surviving documents gives a global threshold
     (first pass), applied as a side input (second pass);
  2. decontamination: eval-set n-gram hits are counted over the corpus; n-grams present in
     `max_corpus_count`+ documents are common phrases and do not drop anything;
  3. dedup: exact + near dedup over the surviving documents (pipelines/dedup_fused.py; with
     `dedup.mode: keyed`, ExactDedup then NearDedup of pipelines/dedup.py).
On Beam's local runners with an output on local disk, the rows that wait for steps 1-3 wait as
files in the output's staging area, not in the runner's memory (pipelines/staged_rows.py).
Row rules shared with the local engine (pipelines/text_local.py, no Beam) live in
pipelines/text_rows.py; `cidermill text` picks the engine (pipelines/text_job.py).

Where rows go (chosen so trainers read OUT and nothing else, reviewers can re-threshold):
  OUT/                kept documents only (`pyarrow.dataset(OUT, format="ipc")` is the corpus);
  OUT/_report/        stats.json (per-stage funnel, reasons, histograms, PII counts), dropped samples,
                      index.html (rendered by pipelines/report_page.py);
  OUT.rejected/       (default, `output.rejected`) every dropped row, same schema, all scores, with
                      drop_stage/drop_reason; kept + rejected = every input page, so any threshold can
                      be re-applied without re-running. Pages opted out of training have text = null.
"""
from __future__ import annotations

from typing import Any, Sequence

import apache_beam as beam

from corpus import objectstore
from corpus.errors import ConfigError
from corpus.reader import ShardDataset
from corpus.report import ReportStats, merge_all
from filters import percentile
from filters.chain import TextChain, funnel, input_files
from pipelines.beam_options import controller_holds_collections
from pipelines.report_io import WriteReport
from pipelines.shards_io import WriteShards, read_items
from pipelines.staged_rows import map_rows
from pipelines.text_rows import (alive, apply_decontam, apply_dedup, apply_quality, dedup_options, ordered_stats,
                                 page_columns, page_dicts, report_info, sample, score_page, without_decontam)


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
            yield from page_dicts(batch)


class ReadPages(beam.PTransform):
    def __init__(self, directory: str):
        super().__init__()
        self.directory = directory
        ds = ShardDataset(directory)  # a clear error before the job starts
        self.columns = page_columns(ds)
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

    def file_paths(self) -> list[str]:  # what a remote runner's workers must hold (runners/dask_client.py)
        return input_files(self.cfg)

    def setup(self):
        self.chain = TextChain(self.cfg)

    def process(self, page: dict[str, Any]):
        yield score_page(self.chain, page)


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
        return ordered_stats(self._c(), acc)


class _HistFn(beam.CombineFn):
    def create_accumulator(self):
        return percentile.empty()

    def add_input(self, acc, score):
        return percentile.add(acc, score)

    def merge_accumulators(self, accs):
        return percentile.merge(accs)

    def extract_output(self, acc):
        return acc


def build_text_pipeline(p, pages_dir: str, out_dir: str, cfg: dict[str, Any], *, rejected_dir: str | None,
                        provenance: dict[str, Any], overwrite: bool = False, target_bytes: int | None = None):
    """Wire the text pipeline into Beam pipeline `p`."""
    chain = TextChain(cfg)  # validates the config (and model paths) before the job starts
    schema = chain.schema()
    # rows that wait for a corpus-wide decision wait as files on local disk, not in a local
    # runner's memory (pipelines/staged_rows.py)
    stage = out_dir if controller_holds_collections(p) and not objectstore.is_remote(out_dir) else None
    rows = (p | "ReadPages" >> ReadPages(pages_dir)
            | "Score" >> beam.ParDo(_Score(cfg)))

    if chain.top_percent is not None:
        hist = (rows | "QualityAlive" >> beam.Filter(lambda r: alive(r) and r.get("quality_score") is not None)
                | "QualityScores" >> beam.Map(lambda r: r["quality_score"])
                | "QualityHistogram" >> beam.CombineGlobally(_HistFn()))
        pct = chain.top_percent
        thr = hist | "TopPercent" >> beam.Map(lambda c: percentile.top_percent_threshold(c, pct))
        rows = map_rows(rows, "QualityDecide", apply_quality, stage, threshold=beam.pvalue.AsSingleton(thr), cfg=cfg)

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
        rows = map_rows(rows, "DecontamDecide", apply_decontam, stage, frequent=beam.pvalue.AsSingleton(frequent))
    else:
        rows = rows | "NoDecontam" >> beam.Map(without_decontam)

    if "dedup" in chain.stage_names:
        from pipelines.dedup import ExactDedup, NearDedup  # noqa: PLC0415
        from pipelines.dedup_fused import FusedDedup  # noqa: PLC0415
        mode, exact, near, dcfg = dedup_options(cfg)
        marked = rows | "Alive" >> beam.Filter(alive)
        dead = rows | "Dead" >> beam.Filter(lambda r: not alive(r))
        try:
            if mode == "fused":
                marked = marked | "Dedup" >> FusedDedup(text_field="text", key_field="id", stage_dir=stage,
                                                         exact=exact, near=near, **dcfg)
            if mode == "keyed" and exact:
                marked = marked | "ExactDedup" >> ExactDedup(text_field="text", key_field="id")
            if mode == "keyed" and near:
                marked = marked | "NearDedup" >> NearDedup(text_field="text", key_field="id", **dcfg)
        except TypeError as e:
            raise ConfigError(f"text config: dedup: {e}") from None
        marked = marked | "DedupDecide" >> beam.Map(apply_dedup)
        rows = (marked, dead) | "AllRows" >> beam.Flatten()

    kept = rows | "Kept" >> beam.Filter(alive)
    dropped = rows | "Dropped" >> beam.Filter(lambda r: not alive(r))
    tb = {"target_bytes": target_bytes} if target_bytes else {}
    kept | "WriteDocuments" >> WriteShards(out_dir, "documents", schema, provenance=provenance,
                                            overwrite=overwrite, **tb)
    if rejected_dir:
        rprov = dict(provenance, job=(provenance.get("job") or "") + "-rejected")
        dropped | "WriteRejected" >> WriteShards(rejected_dir, "documents-rejected", schema, provenance=rprov,
                                                  overwrite=overwrite, **tb)
    stats = rows | "Stats" >> beam.CombineGlobally(_StatsFn(cfg))
    samples = dropped | "Samples" >> beam.Map(sample)
    info = report_info(pages_dir, rejected_dir, chain)
    k = int((cfg.get("output") or {}).get("samples_per_reason", 20))
    (stats, samples) | "WriteReport" >> WriteReport(out_dir, samples_per_reason=k, info=info)


def run_on_beam(pages_dir: str, out_dir: str, cfg: dict[str, Any], beam_args: Sequence[str] | None, *,
                rejected_dir: str | None, provenance: dict[str, Any], overwrite: bool = False,
                target_bytes: int | None = None) -> None:
    """Build the text pipeline and run it to completion on the runner `beam_args` name."""
    from pipelines.beam_options import beam_job  # noqa: PLC0415

    with beam_job(beam_args) as p:
        build_text_pipeline(p, pages_dir, out_dir, cfg, rejected_dir=rejected_dir, provenance=provenance,
                            overwrite=overwrite, target_bytes=target_bytes)
