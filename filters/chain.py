"""The text filter chain: config -> ordered filters -> one output row per input page.

`TextChain.process(page_row)` runs on one document without Beam: sanitize, then every stage
cleans/scores; the first stage that rejects sets `drop_stage`/`drop_reason`, later stages still
score (so every score is on every row). Stages that need the whole corpus (quality top-p%,
decontamination, dedup) only score here; the pipeline decides them afterwards.
"""
from __future__ import annotations

import copy
import hashlib
import os
from collections import Counter
from typing import Any

import pyarrow as pa
import yaml

from corpus.errors import ConfigError
from filters.base import Doc, TextFilter
from filters.c4_lines import C4Lines
from filters.decontam import Decontamination
from filters.gopher import GopherQuality
from filters.langid import LanguageId
from filters.pii import PiiScrubber
from filters.quality_model import QualityModel
from filters.repetition import Repetition
from filters.safety import Safety
from filters.sanitize import Sanitizer

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "text.yaml")
FILTERS: dict[str, type[TextFilter]] = {c.name: c for c in (C4Lines, LanguageId, GopherQuality, Repetition,
                                                             PiiScrubber, Safety, QualityModel, Decontamination)}
PII_TYPES = ("email", "phone", "ip", "credit_card", "ssn", "iban")
# page columns copied onto documents as provenance (added columns only; never renamed)
PAGE_COLUMNS = [("title", pa.string()), ("final_url", pa.string()), ("host", pa.string()), ("depth", pa.int32()),
                ("status", pa.int32()), ("fetched_at", pa.string()), ("content_type", pa.string()),
                ("canonical_url", pa.string()), ("author", pa.string()), ("date", pa.string()),
                ("language_hint", pa.string()), ("rendered", pa.bool_()), ("source", pa.string())]
PAGE_READ_COLUMNS = ["id", "url", "text", "training_allowed", "robots_noindex", "tables"] + [n for n, _ in PAGE_COLUMNS]


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_config(path: str | None = None, overrides: dict | None = None) -> dict[str, Any]:
    """Default config, with the file at `path` (and `overrides`) merged over it key by key."""
    with open(DEFAULT_CONFIG, encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                user = yaml.safe_load(f) or {}
        except OSError as e:
            raise ConfigError(f"{path}: cannot read config ({e.strerror})") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
        if not isinstance(user, dict):
            raise ConfigError(f"{path}: config must be a mapping of stage names to options")
        cfg = _merge(cfg, user)
    if overrides:
        cfg = _merge(cfg, overrides)
    known = {"stages", "output", "input", "dedup", *FILTERS}
    unknown = sorted(set(cfg) - known)
    if unknown:
        raise ConfigError(f"text config: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    stages = cfg.get("stages") or []
    bad = [s for s in stages if s not in known - {"stages", "output"}]
    if bad:
        raise ConfigError(f"text config: unknown stage(s) {bad}; known: input, dedup, {', '.join(FILTERS)}")
    if not stages or stages[0] != "input":
        raise ConfigError("text config: `stages` must start with `input`")
    tail = [s for s in stages if s in ("decontam", "dedup")]
    if stages[len(stages) - len(tail):] != tail or tail != sorted(tail):
        raise ConfigError("text config: `decontam` and `dedup` must be the last stages (decontam first)")
    q = cfg.get("quality") or {}
    if "quality" in stages and q.get("top_percent") is not None:
        after = stages[stages.index("quality") + 1:]
        if any(s not in ("decontam", "dedup") for s in after):
            raise ConfigError("text config: quality with top_percent must come right before decontam/dedup")
    return cfg


def input_files(cfg: dict[str, Any]) -> list[str]:
    """Local files TextChain(cfg) opens (models, word lists, eval sets), named without opening them."""
    return [p for name in cfg["stages"] if name in FILTERS for p in FILTERS[name].input_files(cfg.get(name) or {})]


class TextChain:
    """All per-document work of the text pipeline, driven by a loaded config."""

    def __init__(self, cfg: dict[str, Any]):
        self.cfg = cfg
        self.stage_names: list[str] = list(cfg["stages"])
        self.sanitizer = Sanitizer.from_config(cfg.get("input") or {})
        self.filters: dict[str, TextFilter] = {}
        for name in self.stage_names:
            if name in FILTERS:
                self.filters[name] = FILTERS[name].from_config(cfg.get(name) or {})
        q = self.filters.get("quality")
        self.top_percent = q.top_percent if isinstance(q, QualityModel) else None
        d = self.filters.get("decontam")
        self.decontam_active = isinstance(d, Decontamination) and d.active
        self.deferred = {s for s in ("decontam", "dedup") if s in self.stage_names}
        if self.top_percent is not None:
            self.deferred.add("quality")

    # -- schema --------------------------------------------------------------------------------
    def score_ranges(self) -> dict[str, tuple[float, float]]:
        if getattr(self, "_ranges", None) is not None:
            return self._ranges
        out: dict[str, tuple[float, float]] = {}
        for f in self.filters.values():
            out.update(f.score_ranges)
        self._ranges = out  # the filters' ranges are fixed once configured
        return out

    def stage_scores(self, stage: str) -> tuple[str, ...]:
        """The score columns a stage writes, from a table built once (funnel asks once per row and stage)."""
        if getattr(self, "_stage_scores", None) is None:
            self._stage_scores = {name: tuple(f.score_ranges) for name, f in self.filters.items()}
        return self._stage_scores.get(stage, ())

    def schema(self) -> pa.Schema:
        if getattr(self, "_schema", None) is None:  # built once: every row starts from its names
            self._schema = self._build_schema()
        return self._schema

    def _build_schema(self) -> pa.Schema:
        fields = [("id", pa.string()), ("url", pa.string()), ("text", pa.string()), ("language", pa.string()),
                  ("paragraph_languages", pa.list_(pa.string()))]
        fields += [(name, pa.float64()) for name in self.score_ranges()]
        fields += [(f"pii_{t}", pa.int32()) for t in PII_TYPES]
        fields += [("truncated", pa.bool_()), ("dedup_cluster", pa.string()), ("dedup_cluster_size", pa.int64()),
                   ("drop_stage", pa.string()), ("drop_reason", pa.string())]
        fields += PAGE_COLUMNS
        return pa.schema(fields)

    # -- one document -------------------------------------------------------------------------
    def empty_row(self, page: dict[str, Any]) -> dict[str, Any]:
        if getattr(self, "_row_names", None) is None:
            self._row_names = self.schema().names
        row: dict[str, Any] = dict.fromkeys(self._row_names)
        for name, _ in PAGE_COLUMNS:
            row[name] = page.get(name)
        row["id"] = page.get("id")
        row["url"] = page.get("url")
        row["paragraph_languages"] = []
        row["truncated"] = False
        return row

    def process(self, page: dict[str, Any]) -> dict[str, Any]:
        """Page row (PAGES columns; any may be missing) -> document row with every score.

        Internal keys starting with `_` (decontam n-gram hashes) are for the pipeline and are removed
        before writing."""
        row = self.empty_row(page)
        if not row["id"]:
            basis = str(page.get("url") or "") + "\0" + repr(page.get("text"))[:10000]
            row["id"] = "noid-" + hashlib.sha1(basis.encode("utf-8", "replace")).hexdigest()
            if page.get("text") is None and not page.get("url"):
                row["drop_stage"], row["drop_reason"] = "input", "bad_input:missing_fields"
                return row
        reason = self.sanitizer.opt_out(page)
        if reason:  # opted-out text is not kept anywhere, not even in the rejected dataset
            row["drop_stage"], row["drop_reason"] = "input", reason
            return row
        san = self.sanitizer(page.get("text"))
        row["truncated"] = san.truncated
        row["text"] = san.text
        if san.reason:
            row["drop_stage"], row["drop_reason"] = "input", san.reason
            return row
        doc = Doc(id=row["id"], text=san.text or "", url=page.get("final_url") or page.get("url"))
        tables = page.get("tables")
        if isinstance(tables, list) and tables:
            doc.meta["tables_text"] = "\n".join(t.get("markdown") or "" for t in tables if isinstance(t, dict))
        for name in self.stage_names:
            f = self.filters.get(name)
            if f is None:
                continue
            try:
                f.clean(doc)
                scores = f.score(doc)
            except Exception as e:  # noqa: BLE001  (one bad record must not stop the pipeline)
                scores = {}
                if row["drop_reason"] is None:
                    row["drop_stage"], row["drop_reason"] = name, f"error:{name}:{type(e).__name__}"
            for k in f.score_ranges:
                row[k] = scores.get(k)
            if row["drop_reason"] is None and name not in self.deferred and scores:
                keep, why = f.decide(scores, doc)
                if not keep:
                    row["drop_stage"], row["drop_reason"] = name, why
        row["text"] = doc.text
        row["language"] = doc.language
        row["paragraph_languages"] = doc.meta.get("paragraph_languages", [])
        counts = doc.meta.get("pii_counts") or Counter()
        for t in PII_TYPES:
            row[f"pii_{t}"] = counts.get(t, 0) + (counts.get("ipv4", 0) + counts.get("ipv6", 0) if t == "ip" else 0)
        if self.decontam_active:
            row["_decontam_ngrams"] = doc.meta.get("decontam_ngrams", [])
        return row


def funnel(chain: TextChain, row: dict[str, Any], stats) -> None:
    """Record one final row in `stats` (corpus.report.ReportStats), stage by stage in order."""
    ranges = chain.score_ranges()
    for name in chain.stage_names:
        st = stats.stage(name)
        scores = {k: row.get(k) for k in chain.stage_scores(name)}
        if name == "input":
            if row.get("truncated"):
                st.counters["truncated"] += 1
        if name == "pii":
            for t in PII_TYPES:
                if row.get(f"pii_{t}"):
                    st.counters[t] += int(row[f"pii_{t}"])
        if row.get("drop_stage") == name:
            st.record(False, row.get("drop_reason"), scores, ranges)
            return
        st.record(True, None, scores, ranges)
