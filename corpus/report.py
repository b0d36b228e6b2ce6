"""Audit statistics written beside every dataset: `report/stats.json` and `report/dropped/*.jsonl`.

Everything here merges associatively (Beam combiners, per-worker partials, per-shard stats) and
deterministically: histograms have fixed bins, dropped samples keep the rows with the smallest
key hash, so the same input gives the same report whatever the runner or worker count.
"""
from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from corpus import objectstore
from corpus.buckets import key_hash

REPORT_DIR = "_report"  # "_" prefix: pyarrow.dataset skips it
STATS_NAME = "stats.json"
DEFAULT_SAMPLES_PER_REASON = 20


@dataclass
class Histogram:
    """Fixed-bin histogram over [lo, hi]; values outside are clamped into the end bins."""
    lo: float = 0.0
    hi: float = 1.0
    bins: int = 20
    counts: list[int] = field(default_factory=list)
    nan: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * self.bins

    def add(self, value: float | None) -> None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            self.nan += 1
            return
        width = (self.hi - self.lo) / self.bins
        k = int((float(value) - self.lo) / width) if width > 0 else 0
        self.counts[min(max(k, 0), self.bins - 1)] += 1

    def merge(self, other: "Histogram") -> "Histogram":
        if (self.lo, self.hi, self.bins) != (other.lo, other.hi, other.bins):
            raise ValueError("cannot merge histograms with different bins")
        return Histogram(self.lo, self.hi, self.bins, [a + b for a, b in zip(self.counts, other.counts)],
                         self.nan + other.nan)

    @property
    def edges(self) -> list[float]:
        w = (self.hi - self.lo) / self.bins
        return [self.lo + i * w for i in range(self.bins + 1)]

    def to_json(self) -> dict[str, Any]:
        return {"lo": self.lo, "hi": self.hi, "bins": self.bins, "edges": self.edges, "counts": self.counts,
                "nan": self.nan}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> "Histogram":
        return cls(o["lo"], o["hi"], o["bins"], list(o["counts"]), o.get("nan", 0))


@dataclass
class StageStats:
    """One stage of a pipeline: rows in, kept, dropped by reason, score histograms, counters."""
    rows_in: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    histograms: dict[str, Histogram] = field(default_factory=dict)
    counters: Counter = field(default_factory=Counter)

    def record(self, kept: bool, reason: str | None = None, scores: dict[str, float] | None = None,
               ranges: dict[str, tuple[float, float]] | None = None) -> None:
        self.rows_in += 1
        if kept:
            self.kept += 1
        else:
            self.dropped[reason or "unspecified"] += 1
        for name, value in (scores or {}).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) and value is not None:
                continue
            h = self.histograms.get(name)
            if h is None:
                lo, hi = (ranges or {}).get(name, (0.0, 1.0))
                h = self.histograms[name] = Histogram(lo, hi)
            h.add(value)

    def merge(self, other: "StageStats") -> "StageStats":
        hist = dict(self.histograms)
        for k, h in other.histograms.items():
            hist[k] = hist[k].merge(h) if k in hist else h
        return StageStats(self.rows_in + other.rows_in, self.kept + other.kept, self.dropped + other.dropped,
                          hist, self.counters + other.counters)

    def to_json(self) -> dict[str, Any]:
        return {"rows_in": self.rows_in, "kept": self.kept, "dropped": dict(sorted(self.dropped.items())),
                "histograms": {k: v.to_json() for k, v in sorted(self.histograms.items())},
                "counters": dict(sorted(self.counters.items()))}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> "StageStats":
        return cls(o["rows_in"], o["kept"], Counter(o.get("dropped", {})),
                   {k: Histogram.from_json(v) for k, v in o.get("histograms", {}).items()},
                   Counter(o.get("counters", {})))


def sample_rank(key: str) -> int:
    return key_hash(key)


@dataclass
class Samples:
    """Up to k sample rows per drop reason, chosen by smallest hash of their key (deterministic)."""
    k: int = DEFAULT_SAMPLES_PER_REASON
    by_reason: dict[str, list[tuple[int, str, dict[str, Any]]]] = field(default_factory=dict)

    def add(self, reason: str, key: str, row: dict[str, Any]) -> None:
        lst = self.by_reason.setdefault(reason, [])
        rank = sample_rank(key)
        if len(lst) >= self.k and rank >= lst[-1][0]:
            return
        lst.append((rank, key, row))
        lst.sort(key=lambda t: (t[0], t[1]))
        del lst[self.k:]

    def merge(self, other: "Samples") -> "Samples":
        out = Samples(self.k, {r: list(v) for r, v in self.by_reason.items()})
        for reason, lst in other.by_reason.items():
            for rank, key, row in lst:
                out.add(reason, key, row)
        return out


@dataclass
class ReportStats:
    """All stages of one dataset's report, plus figures other stages render (contact sheets, curves)."""
    stages: dict[str, StageStats] = field(default_factory=dict)
    figures: list[dict[str, str]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    score_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    def stage(self, name: str) -> StageStats:
        st = self.stages.get(name)
        if st is None:  # not setdefault: that builds a StageStats (two Counters) on every call, once per row and stage
            st = self.stages[name] = StageStats()
        return st

    def merge(self, other: "ReportStats") -> "ReportStats":
        stages = dict(self.stages)
        for k, s in other.stages.items():
            stages[k] = stages[k].merge(s) if k in stages else s
        figs = self.figures + [f for f in other.figures if f not in self.figures]
        return ReportStats(stages, figs, {**self.info, **other.info}, {**self.score_ranges, **other.score_ranges})

    def add_figure(self, path: str, title: str, caption: str = "") -> None:
        """Register a PNG under report/ (path relative to report/) for `cidermill report` to show."""
        fig = {"path": path, "title": title, "caption": caption}
        if fig not in self.figures:
            self.figures.append(fig)

    def to_json(self) -> dict[str, Any]:
        return {"stages": {k: v.to_json() for k, v in self.stages.items()}, "figures": self.figures,
                "info": self.info}

    @classmethod
    def from_json(cls, o: dict[str, Any]) -> "ReportStats":
        return cls({k: StageStats.from_json(v) for k, v in o.get("stages", {}).items()},
                   list(o.get("figures", [])), dict(o.get("info", {})))


def merge_all(parts: Iterable[ReportStats]) -> ReportStats:
    out = ReportStats()
    for p in parts:
        out = out.merge(p)
    return out


def reason_filename(reason: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "_", reason).strip("._") or "unspecified"


def report_dir(dataset_dir: str) -> str:
    return objectstore.join(dataset_dir, REPORT_DIR)


def _jsonable(v: Any) -> Any:
    if isinstance(v, bytes):
        return f"<{len(v)} bytes>"
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


def write_report(dataset_dir: str, stats: ReportStats, samples: Samples | None = None) -> str:
    """Write report/stats.json and report/dropped/<reason>.jsonl (atomically, file by file)."""
    rdir = report_dir(dataset_dir)
    if objectstore.is_remote(rdir):
        return _write_report_remote(rdir, stats, samples)
    ddir = os.path.join(rdir, "dropped")
    os.makedirs(ddir, exist_ok=True)
    if samples is not None:
        for reason, lst in sorted(samples.by_reason.items()):
            path = os.path.join(ddir, reason_filename(reason) + ".jsonl")
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                for _, key, row in lst:
                    f.write(json.dumps({"key": key, "reason": reason, "row": _jsonable(row)}, ensure_ascii=False) + "\n")
            os.replace(tmp, path)
    path = os.path.join(rdir, STATS_NAME)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(stats.to_json(), f, indent=1, ensure_ascii=False)
    os.replace(tmp, path)
    return path


def _sample_lines(reason: str, lst) -> str:
    return "".join(json.dumps({"key": key, "reason": reason, "row": _jsonable(row)}, ensure_ascii=False) + "\n"
                   for _, key, row in lst)


def _write_report_remote(rdir: str, stats: ReportStats, samples: Samples | None) -> str:
    """The same files on an object store: one PUT each (no rename needed: a PUT is atomic)."""
    if samples is not None:
        for reason, lst in sorted(samples.by_reason.items()):
            objectstore.write_bytes(f"{rdir}/dropped/{reason_filename(reason)}.jsonl",
                                    _sample_lines(reason, lst).encode("utf-8"))
    path = f"{rdir}/{STATS_NAME}"
    objectstore.write_bytes(path, json.dumps(stats.to_json(), indent=1, ensure_ascii=False).encode("utf-8"))
    return path


def read_report(dataset_dir: str) -> ReportStats:
    path = objectstore.join(report_dir(dataset_dir), STATS_NAME)
    if objectstore.is_remote(path):
        return ReportStats.from_json(json.loads(objectstore.read_bytes(path)))
    with open(path, encoding="utf-8") as f:
        return ReportStats.from_json(json.load(f))


def read_samples(dataset_dir: str) -> dict[str, list[dict[str, Any]]]:
    ddir = objectstore.join(report_dir(dataset_dir), "dropped")
    out: dict[str, list[dict[str, Any]]] = {}
    if objectstore.is_remote(ddir):
        for name in objectstore.listdir(ddir):
            if name.endswith(".jsonl"):
                text = objectstore.read_bytes(f"{ddir}/{name}").decode("utf-8")
                out[name[:-6]] = [json.loads(line) for line in text.splitlines() if line.strip()]
        return out
    if os.path.isdir(ddir):
        for name in sorted(os.listdir(ddir)):
            if name.endswith(".jsonl"):
                with open(os.path.join(ddir, name), encoding="utf-8") as f:
                    out[name[:-6]] = [json.loads(line) for line in f if line.strip()]
    return out
