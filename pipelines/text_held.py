"""The local text engine with worker processes: each worker keeps the rows it scored; decisions
cross to it, rows never cross to the parent.

With one process the local engine holds every scored row and writes the shards itself
(pipelines/text_local.py). With N processes that plan spent the parent's one core on what the
workers could do: on a 28,534-document dedup job, 253 MB of rows and 93 MB of shingle sets
pickled back to it, the marks applied row by row, the shards built and written one after another.
Here a job runs in rounds over the same processes, each item's later rounds in the process that
scored it (local_workers._Pool.on_owners):

1. Score (each work item): the chain on each page; the process keeps the rows and the dedup
   verification data, and returns what the corpus-wide steps need: the quality scores'
   histogram, the decontamination n-gram counts, the exact hashes and the LSH band entries.
2. Candidates (near dedup only): the parent turns the band entries into candidate pairs; each
   process returns the verification data of its documents that are in one, and the parent
   verifies the pairs and builds the cluster labels (filters/dedup_lsh.py, the same steps).
3. Finish: the decisions (quality threshold, frequent n-grams, labels) go to each process once;
   it applies them with the one-process plan's functions, builds its kept and rejected rows'
   Arrow tables with their key and key hash (corpus/keyed_shards.py keyed_table) and returns
   their sizes and its part of the report (funnel counts and dropped samples merge in any order:
   corpus/report.py).
4. Exchange: the shard count follows from the summed sizes, as in write_keyed_rows; each
   process writes its rows for each shard as one Arrow file, in shared memory where there is
   room (exchange_place).
5. Write (per group of shards, any process): a shard's files, memory-mapped, through shard_table
   (Beam's writer's rule: sorted by key, one chunk) into the shard file.

The shards are the same bytes as the one-process plan's and the Beam pipeline's
(tests/pipelines/test_text_local.py compares sha256). The parent holds decisions, not rows.

A job whose dedup follows top-p% quality or decontamination makes its dedup entries after those
two decisions, in one more round over the held rows (decide_then_prepare).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from corpus.arrow_rows import int64_array, uint64_values
from corpus.keyed_shards import HASH, approx_size, blob_table, keyed_table, shard_count, shard_table, table_blob
from corpus.report import ReportStats, Samples, merge_all
from corpus import objectstore
from corpus.writer import finalize_dataset, stage_bytes, staged_bytes, staging_dir, write_shard_file
from filters import percentile
from filters.chain import TextChain, funnel
from filters.dedup_lsh import FusedParams, by_pair, fused_labels, mark_row
from pipelines import local_workers
from pipelines.text_rows import (alive, apply_decontam, apply_dedup, apply_quality, decontam_counts, frequent_ngrams,
                                 ordered_stats, quality_histogram, sample, without_decontam)

SHARDS_PER_WRITER = 4  # shards one write task holds at once (64 MB each by default)
EXCHANGE_PREFIX = "cidermill-exchange-"  # + the parent's pid: /dev/shm/cidermill-exchange-PID-XXXX
SHM = "/dev/shm"  # shared memory as a file system (Linux); where it is missing, the exchange goes to disk


def _held() -> dict:
    return local_workers.state().setdefault("held", {})


# --- round 1: score ---------------------------------------------------------------------------

@dataclass
class Scored:
    """What round 1 returns for one work item (its rows stay where they were scored)."""
    exact: list  # (exact hash, key) of its surviving rows, when dedup is on
    bands: list  # (partition, packed LSH band entries), when near dedup is on
    quality: list[int] | None  # percentile histogram of the surviving rows' quality scores
    ngrams: Counter | None  # decontamination: eval-set n-gram hash -> rows here that hold it


def score_held(item: tuple[int, int, int], prepare: Callable | None, quality: bool, decontam: bool) -> Scored:
    rows = local_workers.score_item(item)
    exact, bands, verification = prepare([r for r in rows if alive(r)]) if prepare is not None else ([], [], [])
    _held()[item] = [rows, verification]
    return Scored(exact, bands, quality_histogram(rows) if quality else None,
                  decontam_counts(rows) if decontam else None)


def held_rows_and_prepared(items: list, scored: list[Scored]) -> tuple[list[dict], list[tuple]]:
    """Everything round 1 left in this process (a job that ended up in one process): the rows in
    item order and batch_preparer's results, for the one-process plan."""
    held = _held()
    rows, prepared = [], []
    for item, s in zip(items, scored):
        item_rows, verification = held.pop(item)
        rows.extend(item_rows)
        prepared.append((s.exact, s.bands, verification))
    return rows, prepared


def decide_then_prepare(items: list, d: Decisions, prepare: Callable) -> list[tuple[list, list]]:
    """Round 1b, for a job whose dedup follows top-p% quality or decontamination: those decisions
    applied to the rows held here, then the dedup entries of the rows still alive -> (exact items,
    band entries) per item; the verification data stays here."""
    held = _held()
    out = []
    for item in items:
        rows = decided_rows(held[item][0], d)
        exact, bands, verification = prepare([r for r in rows if alive(r)])
        held[item] = [rows, verification]
        out.append((exact, bands))
    return out


# --- round 2: candidates ----------------------------------------------------------------------

def candidate_members(items: list, index: dict) -> list[list]:
    """Per item held here: (pair, member) for each candidate pair one of its documents is in
    (filters/dedup_lsh.py by_pair); the verification data is let go."""
    held = _held()
    out = []
    for item in items:
        out.append(list(by_pair(held[item][1], index)))
        held[item][1] = None
    return out


def cluster_labels_from(pmap, items: list, scored: list[Scored], p: FusedParams) -> dict:
    """filters/dedup_lsh.py fused_labels, with the verification data fetched from the processes
    that hold it, for candidate documents only."""
    def members_of(index: dict):
        return (m for part in pmap.on_owners(candidate_members, items, index) for m in part)

    return fused_labels(((s.exact, s.bands, []) for s in scored), p, members_of)


# --- round 3: finish --------------------------------------------------------------------------

@dataclass
class Decisions:
    """What the parent decided from the whole corpus (text_local's rules)."""
    cfg: dict[str, Any]
    threshold: float | None  # top-p% quality threshold, or None
    frequent: set | None  # decontamination's corpus-frequent n-grams, or None when it is off
    labels: dict | None  # dedup cluster labels, or None without dedup


def decide(pmap, items: list, scored: list[Scored], chain: TextChain, cfg: dict[str, Any],
           dedup: FusedParams | None, prepare: Callable | None = None) -> Decisions:
    """The corpus-wide decisions, text_local's rules. `prepare`: a job whose dedup entries could
    not be made while scoring; they are made now, after the quality and decontamination decisions
    (round 1b), and the decisions returned are the dedup labels alone."""
    threshold = None
    if chain.top_percent is not None:
        threshold = percentile.top_percent_threshold(percentile.merge(s.quality for s in scored), chain.top_percent)
    frequent = None
    if chain.decontam_active:
        counts: Counter = Counter()
        for s in scored:
            counts.update(s.ngrams)
        frequent = frequent_ngrams(chain, counts)
    if dedup is None:
        return Decisions(cfg, threshold, frequent, None)
    if prepare is not None:
        for s, (exact, bands) in zip(scored, pmap.on_owners(decide_then_prepare, items,
                                                            Decisions(cfg, threshold, frequent, None), prepare)):
            s.exact, s.bands = exact, bands
        threshold, frequent = None, None  # applied
    return Decisions(cfg, threshold, frequent, cluster_labels_from(pmap, items, scored, dedup))


def decided_rows(rows: list[dict], d: Decisions) -> list[dict]:
    """The corpus-wide steps on some rows, in the one-process plan's order and with its functions."""
    if d.threshold is not None:
        rows = [apply_quality(r, d.threshold, d.cfg) for r in rows]
    rows = [apply_decontam(r, d.frequent) for r in rows] if d.frequent is not None else \
        [without_decontam(r) for r in rows]
    if d.labels is not None:
        rows = [apply_dedup(mark_row(r, d.labels, "id")) if alive(r) else r for r in rows]
    return rows


@dataclass
class Finished:
    """Round 3's result for one work item."""
    kept: int  # summed approx_size of its kept rows (0: none)
    rejected: int  # the same for its rejected rows, when they are written
    stats: ReportStats
    samples: Samples


def finish_held(items: list, d: Decisions, rejected: bool, samples_k: int) -> list[Finished]:
    held = _held()
    chain, out = local_workers.state()["chain"], []
    for item in items:
        rows = decided_rows(held[item][0], d)
        stats, samples = ReportStats(), Samples(samples_k)
        for r in rows:
            funnel(chain, r, stats)
            if not alive(r):
                samples.add(*sample(r))
        kept = [r for r in rows if alive(r)]
        dropped = [r for r in rows if not alive(r)] if rejected else []
        held[item] = [_keyed(kept, chain.schema()), _keyed(dropped, chain.schema())]
        out.append(Finished(sum(approx_size(r) for r in kept), sum(approx_size(r) for r in dropped), stats, samples))
    return out


def _keyed(rows: list[dict], schema: pa.Schema) -> pa.Table | None:
    return keyed_table(rows, schema, [r["id"] for r in rows]) if rows else None


def merged_report(parts: list[Finished], samples_k: int, chain: TextChain) -> tuple[ReportStats, Samples]:
    samples = Samples(samples_k)
    for p in parts:
        samples = samples.merge(p.samples)
    return ordered_stats(chain, merge_all(p.stats for p in parts)), samples


# --- rounds 4 and 5: exchange and write -------------------------------------------------------

def exchange_held(items: list, outputs: list[tuple[str, int]], place: str) -> list[list[tuple[int, int, str]]]:
    """Each output's rows held here, split by shard (key hash % its n), one exchange file per
    shard -> (output number, shard, file name), on the first item's result (the others: [])."""
    held = _held()
    out: list[tuple[int, int, str]] = []
    tag = "held-{}-{}-{}".format(*items[0])  # one process's files: named by its first item
    mine = [held.pop(item) for item in items]  # let go of each copy as soon as the next one exists
    for o, (directory, n) in enumerate(outputs):
        tables = [m[o] for m in mine if m[o] is not None]
        for m in mine:
            m[o] = None
        if not tables:
            continue
        table = pa.concat_tables(tables)
        del tables
        if n > 1:  # one chunk first: take() over hundreds of per-item chunks costs 4x the copy
            table = table.combine_chunks()
        shard = uint64_values(table.column(HASH)) % np.uint64(n)
        for s in np.unique(shard).tolist():
            part = table if n == 1 else table.take(int64_array(np.flatnonzero(shard == s)))
            out.append((o, s, _put(place, directory, f"{tag}-{o}-{s:05d}", part)))
            del part
        del table
    return [out] + [[] for _ in items[1:]]


def exchange_place(directory: str, nbytes: int) -> str:
    """Where the processes leave each other their rows for the shard writers: a fresh directory in
    shared memory (/dev/shm) when it has room for twice `nbytes`, so the files never go to disk and
    their write-back does not compete with the shards'; else one in the output's staging area on
    disk; "" for an output on an object store (the staging area there)."""
    if objectstore.is_remote(directory):
        return ""
    if os.path.isdir(SHM) and os.access(SHM, os.W_OK):
        _sweep_orphans(SHM)
        if shutil.disk_usage(SHM).free > 2 * nbytes:
            return tempfile.mkdtemp(prefix=f"{EXCHANGE_PREFIX}{os.getpid()}-", dir=SHM)
    os.makedirs(staging_dir(directory), exist_ok=True)
    return tempfile.mkdtemp(prefix="exchange-", dir=staging_dir(directory))


def _sweep_orphans(shm: str) -> None:
    """Remove the exchange directories of jobs whose process is gone (killed with SIGKILL, which
    runs no cleanup): files in shared memory hold RAM until someone deletes them."""
    for name in os.listdir(shm):
        if not name.startswith(EXCHANGE_PREFIX):
            continue
        pid = name[len(EXCHANGE_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(shm, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _put(place: str, directory: str, name: str, table: pa.Table) -> str:
    if not place:
        return stage_bytes(directory, table_blob(table), name)
    with pa.OSFile(os.path.join(place, name), "wb") as f, pa.ipc.new_stream(f, table.schema) as w:
        w.write_table(table)
    return name


def _get(place: str, directory: str, name: str) -> pa.Table:
    """An exchange file's table; on disk or in shared memory it is memory-mapped."""
    if not place:
        return blob_table(staged_bytes(directory, name))
    return pa.ipc.open_stream(pa.memory_map(os.path.join(place, name))).read_all()


def shard_groups(n: int, processes: int) -> list[tuple[int, int]]:
    """Shards 0..n-1 as contiguous (first, last) groups of near-equal size: at least one per
    process while there are shards for it, at most SHARDS_PER_WRITER shards each."""
    g = min(n, max(processes, -(-n // SHARDS_PER_WRITER)))
    bounds = [n * k // g for k in range(g + 1)]
    return [(a, b - 1) for a, b in zip(bounds, bounds[1:])]


def write_shards(task: tuple[str, str, dict[int, list[str]]]) -> list:
    """One group's shards from their exchange files -> their manifest entries."""
    directory, place, names = task
    schema = local_workers.state()["chain"].schema()
    return [write_shard_file(directory, s, shard_table([_get(place, directory, x) for x in sorted(files)], schema, s))
            for s, files in sorted(names.items())]


def write_held(pmap, items: list, outputs: list[tuple[str, str, int, dict, int]], schema: pa.Schema) -> None:
    """Rounds 4 and 5 for every output (directory, kind, summed size, provenance, target shard
    bytes), then each output's manifest here."""
    counts = [(d, shard_count(size, target)) for d, _, size, _, target in outputs]
    place = exchange_place(outputs[0][0], sum(size for _, _, size, _, _ in outputs))
    try:
        staged = [e for part in pmap.on_owners(exchange_held, items, counts, place) for e in part]
        tasks = []
        for o, (directory, n) in enumerate(counts):
            files: dict[int, list[str]] = defaultdict(list)
            for oo, s, name in staged:
                if oo == o:
                    files[s].append(name)
            for a, b in shard_groups(n, pmap.processes):
                group = {s: files[s] for s in range(a, b + 1) if files.get(s)}
                if group:
                    tasks.append((directory, place, group))
        infos: dict[str, list] = defaultdict(list)
        for (directory, _, _), part in zip(tasks, pmap(write_shards, tasks)):
            infos[directory].extend(part)
    finally:
        if place:
            shutil.rmtree(place, ignore_errors=True)
    for directory, kind, _, provenance, _ in outputs:
        finalize_dataset(directory, kind, schema, infos[directory], provenance)
