"""The shipped block model: stage one scores blocks from their own features; an optional stage two
rescores them from the scores around them (crawl/extract_context.py).

One JSON file holds both tree ensembles (crawl/gbdt.py) and what training chose: the cut on the
final score and which trafilatura vote the features were computed with. A plain single-ensemble
file (`cidermill.gbdt/1`) still loads as a one-stage model.
"""
from __future__ import annotations

import json

import numpy as np

from crawl.gbdt import Trees

FORMAT = "cidermill.extract/2"


class BlockModel:
    def __init__(self, stage1: Trees, stage2: Trees | None = None, meta: dict | None = None):
        self.stage1, self.stage2 = stage1, stage2
        self.meta = meta if meta is not None else dict(stage1.meta)

    @property
    def threshold(self) -> float:
        return float(self.meta.get("threshold", 0.5))

    @property
    def vote_fast(self) -> bool:
        """Whether the trafilatura vote the features need runs without its fallback extractors."""
        return bool(self.meta.get("vote_fast", True))

    def score(self, rows: np.ndarray, blocks=None, words=None) -> np.ndarray:
        """Final per-block scores for one page (rows: its stage-one feature rows)."""
        rows = np.asarray(rows, dtype=np.float32).astype(np.float64)   # as in training
        prob = self.stage1.predict(rows)
        if self.stage2 is None or blocks is None:
            return prob
        from crawl.extract_context import context_features, context_keys  # noqa: PLC0415
        anc, path = context_keys(blocks)
        w = np.array([len(b.words) for b in blocks]) if words is None else words
        return self.stage2.predict(context_features(prob, w, anc, path, rows))

    def save(self, path: str) -> None:
        o = {"format": FORMAT, "meta": self.meta, "stage1": self.stage1.to_json(),
             "stage2": self.stage2.to_json() if self.stage2 is not None else None}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(o, f, separators=(",", ":"))
            f.write("\n")

    @classmethod
    def load(cls, path: str) -> "BlockModel":
        with open(path, encoding="utf-8") as f:
            o = json.load(f)
        if o.get("format") == "cidermill.gbdt/1":
            return cls(Trees.from_json(o))
        if o.get("format") != FORMAT:
            raise ValueError(f"{path}: not a {FORMAT} model")
        s2 = Trees.from_json(o["stage2"]) if o.get("stage2") else None
        return cls(Trees.from_json(o["stage1"]), s2, dict(o.get("meta") or {}))
