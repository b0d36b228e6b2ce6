"""`cidermill synth math|code`: verified synthetic math and code as a VERIFIED dataset with a report.

Item i depends only on (seed, kind, i) (synth/rng.py), so the Beam job gives the same shards
whatever the runner or worker count. Each work unit generates and verifies a chunk of items
(math: step re-derivation + an independent route; code: tests run in synth/sandbox.py), drops
contaminated ones, and emits rows, report stats and drop samples. Math can also write the
process-supervision split (clean and corrupted solutions, every step labelled) to a second
dataset. Decontamination is here, not in synth/, because it reuses filters/decontam.py.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import apache_beam as beam

from corpus.errors import ConfigError
from corpus.provenance import make_provenance
from corpus.report import ReportStats, read_report
from corpus.schemas import VERIFIED
from corpus.writer import DEFAULT_TARGET_BYTES
from pipelines.beam_options import beam_job
from pipelines.report_io import WriteReport
from pipelines.shards_io import WriteShards

KINDS = ("math", "code")
STAGE = {"math": "synth_math", "code": "synth_code"}
PROCESS_STAGE = "synth_math_process"
CHUNK = 8                      # items per Beam work unit (code items run two sandboxes each)
MAX_N = 10_000_000


@dataclass
class VerifiedConfig:
    kind: str
    n: int
    seed: int = 0
    languages: list[str] | None = None      # math: en, fr, de, es
    families: list[str] | None = None       # math: tables, linear, ...; code: a task or a category
    process_out: str | None = None          # math: where the process-supervision split goes
    eval_sets: list[str] = field(default_factory=list)   # .jsonl / .txt evaluation sets (n-gram check)
    decontam_ngram: int = 13
    heldout_n: int = 1000                   # held-out items (reserved seed) checked by exact match
    math_time_limit_s: float = 5.0
    sandbox_wall_s: float = 4.0
    sandbox_cpu_s: int = 2
    sandbox_memory_mb: int = 256
    buggy_share: float = 0.2

    def validate(self) -> "VerifiedConfig":
        from synth.code_tasks import TASKS
        from synth.math_items import FAMILIES
        from synth.math_lang import LANGUAGES
        from synth.verified_heldout import HELDOUT_SEED
        if self.kind not in KINDS:
            raise ConfigError(f"unknown verified synth kind {self.kind!r}; choose from {', '.join(KINDS)}")
        if not isinstance(self.n, int) or not 0 <= self.n <= MAX_N:
            raise ConfigError(f"--n must be an integer between 0 and {MAX_N:,}, got {self.n!r}")
        if self.seed == HELDOUT_SEED:
            raise ConfigError(f"--seed {HELDOUT_SEED} is reserved for the held-out evaluation split")
        if self.languages:
            if self.kind != "math":
                raise ConfigError("--languages applies to `synth math` only (code is Python with English specs)")
            bad = sorted(set(self.languages) - set(LANGUAGES))
            if bad:
                raise ConfigError(f"math languages {', '.join(bad)} unknown; choose from {', '.join(LANGUAGES)}")
        if self.families:
            known = set(FAMILIES) if self.kind == "math" else {t.family for t in TASKS} | {t.category for t in TASKS}
            bad = sorted(set(self.families) - known)
            if bad:
                raise ConfigError(f"{self.kind} families {', '.join(bad)} unknown; choose from {', '.join(sorted(known))}")
        if self.process_out and self.kind != "math":
            raise ConfigError("--process-out applies to `synth math` only")
        for p in self.eval_sets:
            if not os.path.isfile(p):
                raise ConfigError(f"{p}: evaluation set not found")
        if not 5 <= self.decontam_ngram <= 50:
            raise ConfigError(f"--decontam-ngram must be between 5 and 50, got {self.decontam_ngram}")
        if not 0 <= self.heldout_n <= 100_000:
            raise ConfigError(f"--heldout-n must be between 0 and 100000, got {self.heldout_n}")
        if not 0.0 < self.math_time_limit_s <= 600:
            raise ConfigError(f"--math-time-limit must be in (0, 600] seconds, got {self.math_time_limit_s}")
        if not 0.0 <= self.buggy_share <= 1.0:
            raise ConfigError(f"--buggy-share must be between 0 and 1, got {self.buggy_share}")
        self.sandbox_limits()
        return self

    def sandbox_limits(self):
        from synth.sandbox import SandboxLimits
        return SandboxLimits(wall_s=self.sandbox_wall_s, cpu_s=self.sandbox_cpu_s, memory_mb=self.sandbox_memory_mb,
                             file_mb=1).check()


class Decontaminator:
    """Drops items that match an evaluation set: exact match with a held-out item, or an n-gram
    shared with a file of --eval-sets (filters/decontam.py; any shared n-gram drops: synthetic
    problems are judged one at a time, there is no corpus-frequency exemption)."""

    def __init__(self, cfg: VerifiedConfig):
        from filters.decontam import Decontamination
        from synth.verified_heldout import heldout_keys
        self.heldout = heldout_keys(cfg.kind, cfg.heldout_n) if cfg.heldout_n else set()
        self.ngrams = Decontamination(eval_sets=cfg.eval_sets, ngram=cfg.decontam_ngram)

    def reason(self, key: str, problem: str) -> str | None:
        from filters.base import Doc
        if key in self.heldout:
            return "decontam:heldout_exact"
        if self.ngrams.active and self.ngrams.collisions(Doc(id="", text=problem)):
            return "decontam:eval_ngram_overlap"
        return None


def make_item(cfg: VerifiedConfig, index: int):
    if cfg.kind == "math":
        from synth.math_items import make_math_item
        return make_math_item(cfg.seed, index, cfg.languages, cfg.families, process=bool(cfg.process_out),
                              time_limit_s=cfg.math_time_limit_s)
    from synth.code_items import make_code_item
    return make_code_item(cfg.seed, index, cfg.families, cfg.sandbox_limits(), cfg.buggy_share)


def verify_range(cfg: VerifiedConfig, lo: int, hi: int, decon: Decontaminator):
    """(rows, process rows, stats, process stats, drops) for items lo..hi-1."""
    rows, process_rows, drops = [], [], []
    st, pst = ReportStats(), ReportStats()
    stage = st.stage(STAGE[cfg.kind])
    for i in range(lo, hi):
        item = make_item(cfg, i)
        if item.row is not None:
            reason = decon.reason(item.eval_key, item.row["problem"])
            if reason:
                item.drop, item.sample = reason, {"family": item.row["family"], "problem": item.row["problem"][:400]}
                item.row, item.process_rows = None, []
                item.counters = {k: v for k, v in item.counters.items() if not k.startswith("kept:")}
        stage.counters.update(item.counters)
        scores = {"seconds": item.seconds}
        if item.row is not None:
            scores["difficulty"] = item.row["difficulty"]
            stage.counters[f"family:{item.row['family']}"] += 1
            stage.counters[f"language:{item.row['language']}"] += 1
            rows.append(item.row)
        stage.record(item.row is not None, item.drop, scores=scores,
                     ranges={"seconds": (0.0, 5.0), "difficulty": (0.0, 4.0)})
        if item.row is None:
            drops.append((item.drop, item.id, item.sample))
        for pr in item.process_rows:
            labels = [s["correct"] for s in pr["steps"]]
            pstage = pst.stage(PROCESS_STAGE)
            pstage.record(True, scores={"steps": len(labels)}, ranges={"steps": (0.0, 10.0)})
            pstage.counters["steps_correct"] += sum(labels)
            pstage.counters["steps_incorrect"] += len(labels) - sum(labels)
            pstage.counters["solutions_corrupted" if pr["id"].endswith("-corrupt") else "solutions_clean"] += 1
            process_rows.append(pr)
    return rows, process_rows, st, pst, drops


class _GenerateVerified(beam.DoFn):
    """(lo, hi) chunk -> rows (main), process rows, drops, stats, process stats."""

    def __init__(self, cfg: VerifiedConfig):
        self.cfg = cfg

    def file_paths(self) -> list[str]:  # the eval sets every worker reads (runners/dask_client.py)
        return list(self.cfg.eval_sets)

    def setup(self):
        self.decon = Decontaminator(self.cfg)
        if self.cfg.kind == "math":
            from synth.math_items import warm_up
            warm_up()  # sympy's first solve builds caches; that time is not the verifier's

    def process(self, chunk):
        rows, prows, st, pst, drops = verify_range(self.cfg, chunk[0], chunk[1], self.decon)
        yield from rows
        for r in prows:
            yield beam.pvalue.TaggedOutput("process", r)
        for d in drops:
            yield beam.pvalue.TaggedOutput("drops", d)
        yield beam.pvalue.TaggedOutput("stats", st)
        yield beam.pvalue.TaggedOutput("pstats", pst)


class VerifiedSynth(beam.PTransform):
    """PBegin -> the VERIFIED dataset at out_dir with its report (and the process split)."""

    def __init__(self, cfg: VerifiedConfig, out_dir: str, provenance: dict, target_bytes: int, overwrite: bool):
        super().__init__()
        self.cfg, self.out_dir, self.provenance = cfg, out_dir, provenance
        self.target_bytes, self.overwrite = target_bytes, overwrite

    def expand(self, pbegin):
        cfg = self.cfg
        chunks = [(lo, min(cfg.n, lo + CHUNK)) for lo in range(0, cfg.n, CHUNK)]
        out = (pbegin | "Chunks" >> beam.Create(chunks) | "Spread" >> beam.Reshuffle()
               | "Generate" >> beam.ParDo(_GenerateVerified(cfg)).with_outputs("process", "drops", "stats", "pstats",
                                                                              main="rows"))
        written = out.rows | "Write" >> WriteShards(self.out_dir, "verified", VERIFIED, target_bytes=self.target_bytes,
                                                    provenance=self.provenance, overwrite=self.overwrite)
        info = {"synth_kind": cfg.kind, "seed": cfg.seed, "heldout_n": cfg.heldout_n,
                "eval_sets": [os.path.basename(e) for e in cfg.eval_sets], "decontam_ngram": cfg.decontam_ngram}
        _ = (out.stats, out.drops) | "Report" >> WriteReport(self.out_dir, info=info)
        if cfg.process_out:
            _ = out.process | "WriteProcess" >> WriteShards(cfg.process_out, "verified", VERIFIED,
                                                            target_bytes=self.target_bytes,
                                                            provenance=self.provenance, overwrite=self.overwrite)
            no_drops = pbegin | "NoDrops" >> beam.Create([])
            _ = (out.pstats, no_drops) | "ProcessReport" >> WriteReport(cfg.process_out)
        return written


def run_verified(kind: str, n: int, out_dir: str, seed: int = 0, beam_args: Sequence[str] | None = None, *,
                 overwrite: bool = False, target_bytes: int = DEFAULT_TARGET_BYTES, **options) -> dict[str, Any]:
    """Generate and verify `n` items of `kind` (math | code) into the VERIFIED dataset `out_dir`.

    options: see VerifiedConfig (languages, families, process_out, eval_sets, decontam_ngram,
    heldout_n, math_time_limit_s, sandbox_wall_s, sandbox_cpu_s, sandbox_memory_mb, buggy_share)."""
    unknown = set(options) - set(VerifiedConfig.__dataclass_fields__)
    if unknown:
        raise ConfigError(f"unknown option(s) for synth {kind}: {', '.join(sorted(unknown))}")
    cfg = VerifiedConfig(kind=kind, n=n, seed=int(seed), **options).validate()
    if cfg.process_out and os.path.abspath(cfg.process_out) == os.path.abspath(out_dir):
        raise ConfigError("--process-out must differ from --out")
    provenance = make_provenance("verified", config=asdict(cfg), inputs=list(cfg.eval_sets))
    with beam_job(beam_args) as p:
        _ = p | "VerifiedSynth" >> VerifiedSynth(cfg, out_dir, provenance, target_bytes, overwrite)
    stats = read_report(out_dir)
    st = stats.stages.get(STAGE[kind])
    summary = {"out": out_dir, "kind": kind, "generated": st.rows_in if st else 0, "rows": st.kept if st else 0,
               "dropped": dict(st.dropped) if st else {}}
    if cfg.process_out:
        pst = read_report(cfg.process_out).stages.get(PROCESS_STAGE)
        summary["process_rows"] = pst.kept if pst else 0
    return summary


__all__ = ["KINDS", "VerifiedConfig", "Decontaminator", "VerifiedSynth", "verify_range", "run_verified"]
