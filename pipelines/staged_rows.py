"""Rows parked as files while a corpus-wide step decides, for Beam's local runners.

A step that decides from the whole corpus (the quality percentile, decontamination's corpus
counts, the dedup clusters) reads its rows again once a side input is ready, so the runner keeps
them in between. FnApiRunner keeps them encoded in its one controller process and, with
`multi_processing`, moves them through that process to a worker and back (measured on a 2-worker
dedup job of 12,000 documents: 2.2 of the controller's 4.6 CPU-s). Staged, each batch of rows is
one pickled file in the output's staging area (corpus/writer.py stage_bytes: named by content, so
a task that runs twice writes the same file; removed with the staging area when the job has
finished) and only its name crosses. The files are this job's own, written by its own workers.

Where to stage is the caller's choice (pipelines/text_pipeline.py): the output directory when the
runner holds collections in one process (pipelines/beam_options.py controller_holds_collections)
and that directory is on local disk; otherwise nowhere, and map_rows is a plain Map.
"""
from __future__ import annotations

import pickle
from typing import Callable

import apache_beam as beam

from corpus.writer import stage_bytes, staged_bytes

BATCH_ROWS = 1024  # rows per staged file


def stage_rows(stage_dir: str, rows: list[dict]) -> str:
    """`rows` as one file of `stage_dir`'s staging area -> its name."""
    return stage_bytes(stage_dir, pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))


def staged_rows(stage_dir: str, name: str) -> list[dict]:
    """The rows stage_rows wrote under `name`."""
    return pickle.loads(staged_bytes(stage_dir, name))


class _Stage(beam.DoFn):
    def __init__(self, stage_dir: str):
        self.stage_dir = stage_dir

    def dataset_paths(self) -> list[str]:  # what a remote runner's workers must see (runners/dask_client.py)
        return [self.stage_dir]

    def process(self, batch: list[dict]):
        yield stage_rows(self.stage_dir, batch)


class StageRows(beam.PTransform):
    """PCollection[dict] -> PCollection[str]: names of staged batches of up to BATCH_ROWS rows."""

    def __init__(self, stage_dir: str, batch_rows: int = BATCH_ROWS):
        super().__init__()
        self.stage_dir, self.batch_rows = stage_dir, batch_rows

    def expand(self, rows):
        return (rows
                | "Batch" >> beam.BatchElements(min_batch_size=min(32, self.batch_rows), max_batch_size=self.batch_rows)
                | "Stage" >> beam.ParDo(_Stage(self.stage_dir)))


class _MapStaged(beam.DoFn):
    """Staged batch names -> fn(row, **side inputs) for every row of each batch."""

    def __init__(self, fn: Callable, stage_dir: str):
        self.fn, self.stage_dir = fn, stage_dir

    def dataset_paths(self) -> list[str]:
        return [self.stage_dir]

    def process(self, name: str, **kwargs):
        for row in staged_rows(self.stage_dir, name):
            yield self.fn(row, **kwargs)


def map_staged(names, label: str, fn: Callable, stage_dir: str, /, **kwargs):
    """Names of staged batches -> fn(row, **kwargs) for each of their rows (kwargs may be side
    inputs; the positional parameters leave every keyword to them)."""
    return names | label >> beam.ParDo(_MapStaged(fn, stage_dir), **kwargs)


def map_rows(rows, label: str, fn: Callable, stage_dir: str | None, /, **kwargs):
    """`rows | label >> beam.Map(fn, **kwargs)` (kwargs may be side inputs); with `stage_dir`, the
    rows are staged first and read back by the step, so the runner holds only their names."""
    if not stage_dir:
        return rows | label >> beam.Map(fn, **kwargs)
    return map_staged(rows | f"{label}Staged" >> StageRows(stage_dir), label, fn, stage_dir, **kwargs)
