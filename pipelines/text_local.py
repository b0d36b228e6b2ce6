"""The text pipeline on one machine without Beam: the default engine of `cidermill text` when no
Beam option is given (`--runner local` names it).

Why: on one machine Beam's in-process runner costs a fixed ~3 CPU-s (importing Beam, building the
graph, bundles) and per-element overhead between every step, which is most of a dedup job's CPU
(README, "Performance: where the CPU goes"). This engine runs the same steps with the same
functions (filters/chain.py per page, pipelines/text_rows.py per row, filters/dedup_lsh.py for
dedup, corpus/keyed_shards.py for shards), in the same order, so it writes the same shards, byte
for byte, as the Beam pipeline (tests/pipelines/test_text_local.py compares the sha256 of every
shard). Past one machine is Beam's: any Beam option (its workers, Dask, Dataflow) selects the
Beam pipeline, pipelines/text_pipeline.py.

Workers: `--workers N` scores pages and prepares dedup entries in N processes
(pipelines/local_workers.py). The corpus-wide decisions are made here; the processes keep their
rows, apply the decisions and write the shards (pipelines/text_held.py). A job that `--workers
auto` keeps in one process finishes here with the one-process steps below. The bytes are the same
for any N. `--workers auto` (the default) starts them only when the first work item's measured
cost says they pay, one per usable CPU at most, as many as memory allows.

Memory: every scored row is held until the corpus-wide decisions are made, as Beam's in-process
runner holds its PCollections; an input whose estimated peak exceeds the memory available is
refused before anything is written (pipelines/memory_fit.py). `dedup.mode: keyed` exists to
spread dedup state over workers; in one process both modes run the fused steps, whose marks
equal the keyed path's (tested in tests/pipelines/test_dedup_fused.py).
"""
from __future__ import annotations

import contextlib
import functools
import logging
from typing import Any

from corpus.cpus import usable_cpus
from corpus.errors import ConfigError
from corpus.keyed_shards import write_keyed_rows
from corpus.reader import ShardDataset, read_items
from corpus.report import ReportStats, Samples, merge_all, write_report
from corpus.writer import DEFAULT_TARGET_BYTES, prepare_output_dir, remove_unfinished
from filters import percentile
from filters.chain import TextChain, funnel
from filters.dedup_lsh import FusedParams, batch_preparer, fused_dedup_rows, fused_params
from pipelines.local_workers import AUTO, score_pages, worker_map
from pipelines.text_held import (Scored, decide, finish_held, held_rows_and_prepared, merged_report, score_held,
                                 write_held)
from pipelines.memory_fit import check_local_fits, input_bytes, workers_that_fit
from pipelines.text_rows import (alive, apply_decontam, apply_dedup, apply_quality, decontam_counts, dedup_options,
                                 frequent_ngrams, ordered_stats, page_columns, quality_histogram, report_info, sample,
                                 without_decontam)

log = logging.getLogger(__name__)


def _quality(rows: list[dict], chain: TextChain, cfg: dict[str, Any]) -> list[dict]:
    """Top-p% of quality: one histogram over the surviving documents, then the threshold."""
    threshold = percentile.top_percent_threshold(quality_histogram(rows), chain.top_percent)
    return [apply_quality(r, threshold, cfg) for r in rows]


def _decontam(rows: list[dict], chain: TextChain) -> list[dict]:
    frequent = frequent_ngrams(chain, decontam_counts(rows))
    return [apply_decontam(r, frequent) for r in rows]


def _dedup_params(cfg: dict[str, Any]) -> FusedParams:
    _, exact, near, options = dedup_options(cfg)
    try:
        return fused_params(exact=exact, near=near, **options)
    except TypeError as e:
        raise ConfigError(f"text config: dedup: {e}") from None


def _dedup(rows: list[dict], params: FusedParams, pmap=map, prepared: list | None = None) -> list[dict]:
    live = [r for r in rows if alive(r)]
    dead = [r for r in rows if not alive(r)]
    return [apply_dedup(r) for r in fused_dedup_rows(live, "text", "id", params, pmap, prepared)] + dead


def _prepare_while_scoring(chain: TextChain, dedup: FusedParams | None):
    """The dedup preparation to run on each work item as it is scored, or None. Only when no
    corpus-wide step drops rows between scoring and dedup (top-p% quality, decontamination):
    then the rows alive after scoring are the rows dedup sees."""
    if dedup is None or not (dedup.exact or dedup.near) or chain.top_percent is not None or chain.decontam_active:
        return None
    return batch_preparer("text", "id", dedup)


def _report(out_dir: str, rows: list[dict], chain: TextChain, cfg: dict[str, Any], info: dict[str, Any]) -> None:
    acc = ReportStats()
    samples = Samples(_samples_per_reason(cfg))
    for r in rows:
        funnel(chain, r, acc)
        if not alive(r):
            samples.add(*sample(r))
    stats = merge_all([ordered_stats(chain, acc)])
    stats.info.update(info)
    write_report(out_dir, stats, samples)


def _finish_in_workers(pmap, items: list, scored: list[Scored], chain: TextChain, cfg: dict[str, Any],
                       dedup: FusedParams | None, prepared_while_scoring: bool, out_dir: str,
                       rejected_dir: str | None, target: int, provenance: dict[str, Any], rprov: dict[str, Any],
                       info: dict[str, Any]) -> None:
    """The rounds of pipelines/text_held.py after round 1 (`scored`): decisions here, marks and
    shards in the processes that hold the rows; manifests and report here."""
    later = None
    if dedup is not None and (dedup.exact or dedup.near) and not prepared_while_scoring:
        later = batch_preparer("text", "id", dedup)
    decisions = decide(pmap, items, scored, chain, cfg, dedup, later)
    k = _samples_per_reason(cfg)
    finished = pmap.on_owners(finish_held, items, decisions, bool(rejected_dir), k)
    outputs = [(out_dir, "documents", sum(f.kept for f in finished), provenance, target)]
    if rejected_dir:
        outputs.append((rejected_dir, "documents-rejected", sum(f.rejected for f in finished), rprov, target))
    write_held(pmap, items, outputs, chain.schema())
    stats, samples = merged_report(finished, k, chain)
    stats.info.update(info)
    write_report(out_dir, stats, samples)


@contextlib.contextmanager
def _unfinished_removed(*directories: str | None):
    """A job that fails part-way leaves no staged rows and no shard files behind (no manifest was
    written: prepare_output_dir removed the old one)."""
    try:
        yield
    except BaseException:
        for d in directories:
            if d:
                remove_unfinished(d)
        raise


def _samples_per_reason(cfg: dict[str, Any]) -> int:
    return int((cfg.get("output") or {}).get("samples_per_reason", 20))


def run_text_local(pages_dir: str, out_dir: str, cfg: dict[str, Any], *, rejected_dir: str | None,
                   provenance: dict[str, Any], overwrite: bool = False, target_bytes: int | None = None,
                   workers: int | str = AUTO, memory_check: bool = True) -> None:
    """The text pipeline's steps in order; writes OUT, OUT.rejected and the report. Scoring and
    dedup preparation run in `workers` processes (pipelines/local_workers.py), the rest here."""
    chain = TextChain(cfg)  # validates the config (and model paths) before any output is touched
    dedup = _dedup_params(cfg) if "dedup" in chain.stage_names else None  # a bad option fails now
    schema = chain.schema()
    dataset = ShardDataset(pages_dir)
    columns = page_columns(dataset)
    read_bytes = input_bytes(dataset, columns) if memory_check or workers == AUTO else None
    if memory_check:  # before any output is touched
        check_local_fits(pages_dir, read_bytes, 1 if workers == AUTO else workers)
    most = workers_that_fit(read_bytes, usable_cpus()) if workers == AUTO else 1
    rprov = dict(provenance, job=(provenance.get("job") or "") + "-rejected")
    prepare_output_dir(out_dir, "documents", job=provenance.get("job"), overwrite=overwrite)
    if rejected_dir:
        prepare_output_dir(rejected_dir, "documents-rejected", job=rprov.get("job"), overwrite=overwrite)

    target = target_bytes or DEFAULT_TARGET_BYTES
    prepare = _prepare_while_scoring(chain, dedup)
    with worker_map(workers, chain, dataset, columns, cfg, most=most) as pmap:
        if workers != 1:  # the workers may keep the rows
            items = read_items(dataset)
            scored = list(pmap(functools.partial(score_held, prepare=prepare, quality=chain.top_percent is not None,
                                                 decontam=chain.decontam_active), items))
            if pmap.processes > 1:
                log.info("text (local engine, %d processes): %d work items scored; the rows stay in the workers",
                         pmap.processes, len(scored))
                with _unfinished_removed(out_dir, rejected_dir):
                    try:
                        _finish_in_workers(pmap, items, scored, chain, cfg, dedup, prepare is not None, out_dir,
                                           rejected_dir, target, provenance, rprov,
                                           report_info(pages_dir, rejected_dir, chain))
                    except BaseException:
                        pmap.close()  # a surviving worker may still be writing a shard: it ends before the cleanup
                        raise
                return
            rows, prepared = held_rows_and_prepared(items, scored)
            prepared = prepared if prepare is not None else None
        else:
            rows, prepared = score_pages(pmap, dataset, prepare)
        log.info("text (local engine, %d process%s): %d pages scored", pmap.processes,
                 "es" if pmap.processes > 1 else "", len(rows))
        if chain.top_percent is not None:
            rows = _quality(rows, chain, cfg)
        rows = _decontam(rows, chain) if chain.decontam_active else [without_decontam(r) for r in rows]
        if dedup is not None:
            rows = _dedup(rows, dedup, pmap, prepared)

    write_keyed_rows(out_dir, "documents", schema, [r for r in rows if alive(r)], target_bytes=target,
                     provenance=provenance)
    if rejected_dir:
        write_keyed_rows(rejected_dir, "documents-rejected", schema, [r for r in rows if not alive(r)],
                         target_bytes=target, provenance=rprov)
    _report(out_dir, rows, chain, cfg, report_info(pages_dir, rejected_dir, chain))
