"""Read the ``vision:`` datasets into sample sources and held-out evaluation items.

Pair rows are split by a hash of their id (training.clip.data.is_heldout): held-out rows give only
evaluation questions, never training samples, so adding rows never moves a row between the two.
Each PAIRS dataset contributes up to ``max_eval / len(pairs)`` questions (charts, tables and scenes
all get evaluated, not just the first dataset listed).
Interleaved documents are training data only; their images come from the PAIRS datasets listed
in ``images`` (matched by sha256).
"""
from __future__ import annotations

from dataclasses import dataclass

from corpus.errors import CidermillError
from corpus.reader import ShardDataset
from training.clip.data import is_heldout
from training.vision.loader import SampleSource
from training.vision.run_config import VisionRun
from training.vision.samples import (EvalItem, SampleBuilder, image_store, interleaved_sample, pair_eval_items,
                                     pair_samples)

PAIR_COLS = ["id", "image", "text", "text_source", "qa", "meta_json", "drop_reason", "sha256"]


@dataclass
class VisionData:
    sources: list[tuple[str, SampleSource, float]]
    eval_items: list[EvalItem]
    report: dict


def _rows(path: str, cols: list[str], limit: int | None = None):
    ds = ShardDataset(path)
    have = [c for c in cols if c in ds.schema.names]
    for i, row in enumerate(ds.iter_rows(have)):
        if limit and i >= limit:
            return
        yield row


def build_vision_data(v: VisionRun, builder: SampleBuilder) -> VisionData:
    sources, evals = [], []
    per_source = max(1, v.max_eval // max(1, len(v.pairs)))   # every dataset gets its share of questions
    for e in v.pairs:
        samples, mine = [], []
        for row in _rows(e.path, PAIR_COLS, v.max_rows):
            if row.get("drop_reason") or not row.get("image"):
                continue
            if is_heldout(str(row["id"]), v.heldout):
                if len(mine) < per_source:
                    mine.extend(pair_eval_items(builder, row))
                continue
            samples.extend(pair_samples(builder, row, e.name))
        if not samples:
            raise CidermillError(f"vision.pairs {e.name} ({e.path}): no usable training samples")
        sources.append((e.name, SampleSource(samples), e.weight))
        evals.extend(mine[:per_source])
    for e in v.interleaved:
        store = {}
        for p in e.images:
            store.update(image_store(_rows(p, ["sha256", "image"])))
        samples = [s for s in (interleaved_sample(builder, d, store, e.name)
                               for d in _rows(e.path, ["id", "items"], v.max_rows)) if s is not None]
        if not samples:  # every document dropped (reasons in the report): train on without it
            builder.report.drop("source_without_samples", f"{e.name}:{e.path}")
            continue
        sources.append((e.name, SampleSource(samples), e.weight))
    return VisionData(sources, evals, builder.report.to_dict())
