"""Beam glue for audit reports: merge per-bundle ReportStats and drop samples, write report/."""
from __future__ import annotations

import apache_beam as beam

from corpus.report import ReportStats, Samples, merge_all, write_report


class _MergeSamples(beam.CombineFn):
    def __init__(self, k: int):
        self.k = k

    def create_accumulator(self):
        return Samples(self.k)

    def add_input(self, acc: Samples, item):
        reason, key, row = item
        acc.add(reason, key, row)
        return acc

    def merge_accumulators(self, accs):
        out = Samples(self.k)
        for a in accs:
            out = out.merge(a)
        return out

    def extract_output(self, acc):
        return acc


class WriteReport(beam.PTransform):
    """(stats: PCollection[ReportStats], samples: PCollection[(reason, key, row)]) -> report/ written.

    Usage: `(stats_pc, samples_pc) | WriteReport(out_dir)`; outputs the merged ReportStats."""

    def __init__(self, out_dir: str, samples_per_reason: int = 20, info: dict | None = None):
        super().__init__()
        self.out_dir, self.k, self.info = out_dir, samples_per_reason, info or {}

    def expand(self, pcolls):
        stats_pc, samples_pc = pcolls
        merged = stats_pc | "MergeStats" >> beam.CombineGlobally(merge_all)
        samples = samples_pc | "MergeSamples" >> beam.CombineGlobally(_MergeSamples(self.k))
        out_dir, info = self.out_dir, self.info

        def _write(stats: ReportStats, samples: Samples):
            stats.info.update(info)
            write_report(out_dir, stats, samples)
            return stats

        return merged | "Write" >> beam.Map(_write, samples=beam.pvalue.AsSingleton(samples))
