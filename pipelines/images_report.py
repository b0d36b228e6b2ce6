"""The images stage's two reports, as composite PTransforms (the events, samples and figures they
hold are imagetext/report.py's; the per-document events imagetext/interleaved.py's).

PairsReport: per-stage stats of the images and the pairs, the CLIP-score histogram, one contact
sheet per drop reason and dropped-row samples, into PAIRS_DIR/_report. InterleavedReport: stats
of the interleaved images and documents into INTERLEAVED_DIR/_report.
"""
from __future__ import annotations

import apache_beam as beam
from apache_beam.pvalue import AsSingleton

from corpus.report import ReportStats, merge_all
from imagetext.config import ImagesConfig
from imagetext.interleaved import document_events
from imagetext.report import (add_to_hist, empty_hist, image_event, merge_hists, pair_events, record_event,
                              sample_row, sheet_entry, write_figures)
from pipelines.report_io import WriteReport


class StatsFn(beam.CombineFn):
    """(stage, kept, reason, scores) events -> one ReportStats."""

    def create_accumulator(self):
        return ReportStats()

    def add_input(self, acc, ev):
        return record_event(acc, ev)

    def merge_accumulators(self, accs):
        return merge_all(accs)

    def extract_output(self, acc):
        return acc


class HistFn(beam.CombineFn):
    """(score, kept) -> [kept counts, dropped counts] over the report's fixed fine bins."""

    def create_accumulator(self):
        return empty_hist()

    def add_input(self, acc, item):
        return add_to_hist(acc, *item)

    def merge_accumulators(self, accs):
        return merge_hists(accs)

    def extract_output(self, acc):
        return acc


class PairsReport(beam.PTransform):
    """(final pairs, image infos (src, info), the CLIP cut singleton) -> PAIRS_DIR/_report."""

    def __init__(self, pairs_dir: str, cfg: ImagesConfig, model_name: str | None):
        super().__init__()
        self.pairs_dir, self.cfg, self.model_name = pairs_dir, cfg, model_name

    def expand(self, inputs):
        final, infos, cut = inputs
        img_events = infos | "ImgEvents" >> beam.Map(lambda kv: image_event(kv[1]))
        row_events = final | "PairEvents" >> beam.FlatMap(pair_events)
        stats = ((img_events, row_events) | "Events" >> beam.Flatten()
                 | "Stats" >> beam.CombineGlobally(StatsFn()))
        hist = (final | "HistItems" >> beam.Filter(lambda r: r["clip_score"] is not None)
                | "HistPairs" >> beam.Map(lambda r: (r["clip_score"], r["drop_reason"] is None))
                | "Hist" >> beam.CombineGlobally(HistFn()))
        sheets = (final | "SheetKey" >> beam.Map(sheet_entry)
                  | "SheetTop" >> beam.combiners.Top.SmallestPerKey(self.cfg.sheet_tiles)
                  | "SheetList" >> beam.combiners.ToList())
        pairs_dir, model_name = self.pairs_dir, self.model_name   # lambdas capture values, not the transform
        figures = (final.pipeline | "FigSeed" >> beam.Create([None])
                   | "Figures" >> beam.Map(lambda _, sh, hi, c: write_figures(sh, hi, c, pairs_dir, model_name),
                                           sh=AsSingleton(sheets), hi=AsSingleton(hist), c=AsSingleton(cut)))
        samples = (final | "Dropped" >> beam.Filter(lambda r: r["drop_reason"] is not None)
                   | "Samples" >> beam.Map(lambda r: (r["drop_reason"], r["id"], sample_row(r))))
        return ((stats, figures) | "StatsAndFigs" >> beam.Flatten(), samples) | "Write" >> WriteReport(
            self.pairs_dir, samples_per_reason=self.cfg.samples_per_reason, info={"config": self.cfg.to_json()})


class InterleavedReport(beam.PTransform):
    """(document row, per-image outcomes) -> INTERLEAVED_DIR/_report (stats only, no samples)."""

    def __init__(self, interleaved_dir: str, cfg: ImagesConfig):
        super().__init__()
        self.interleaved_dir, self.cfg = interleaved_dir, cfg

    def expand(self, docs_out):
        stats = (docs_out | "Events" >> beam.FlatMap(lambda t: document_events(*t))
                 | "Stats" >> beam.CombineGlobally(StatsFn()))
        no_samples = docs_out.pipeline | "NoSamples" >> beam.Create([])
        return (stats, no_samples) | "Write" >> WriteReport(self.interleaved_dir, info={"config": self.cfg.to_json()})
