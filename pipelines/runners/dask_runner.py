"""Beam on Dask, in a runner the project owns: `--runner dask`.

Beam's own DaskRunner (apache_beam.runners.dask) translates a pipeline into dask bags, which is
the right idea, but as shipped in Beam 2.77 it:
  - computes only the last collection it visits, so a pipeline with several sinks (every cidermill
    pipeline: shards, rejected rows, report) writes one branch and silently skips the rest;
  - evaluates a side input by iterating its bag inside the task that reads it (a nested compute),
    which fails against a distributed scheduler ("Could not serialize object of type
    _HLGExprSequence");
  - mixes a multi-output ParDo's tagged outputs into one bag (keyed by producer, not collection).

This runner keeps upstream's structure (a PipelineVisitor mapping each primitive to a bag, the same
PTransform overrides for Create/Reshuffle/Flatten) and changes these things:
  - bags are keyed by PCollection, and a ParDo's outputs are split by tag;
  - a side input becomes one dask Delayed (the concatenation of its bag's partitions) passed as a
    task argument, so the scheduler materialises it before the tasks that read it;
  - a CombinePerKey is lifted: each partition combines its own rows per key first, so only the
    accumulators cross the shuffle (Beam's portable runners do the same), not every row; inside a
    CombineGlobally (one key) they meet in one task instead of a shuffle;
  - every leaf collection is computed, in one graph, so shared upstream work runs once; leaves are
    reduced to counts on the workers, so no data travels back to the client.
It supports batch pipelines in the global window (all of cidermill's); anything else is refused
with a clear error rather than run wrongly.

Options: --dask_client_address HOST:PORT (an existing scheduler) or --dask_workers N (a local
cluster of N single-threaded worker processes, default 2, kept for the process's later jobs:
runners/dask_client.py); --dask_npartitions P (default: 2 per worker).
"""
from __future__ import annotations

import argparse
import logging
import re
from typing import Any

from apache_beam import pvalue
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.pipeline import PipelineVisitor
from apache_beam.runners.runner import PipelineResult, PipelineRunner, PipelineState

from corpus.errors import CidermillError
from pipelines.runners.dask_tasks import (by_key, concat_parts, count_items, final_combine, grouped, merge_partials,
                                         partial_combine, pick_tag, run_bundle, worker_traffic)

log = logging.getLogger(__name__)


# Partitions per worker of each created collection: every partition is a task at each step, so fewer
# cost less CPU (README, "Fewer Dask partitions": 2-worker dedup 9.0-9.3 s with 4, 10.2-10.4 s with 8)
PARTITIONS_PER_WORKER = 2


class CidermillDaskOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--dask_client_address", default=None,
                            help="HOST:PORT of a running `dask scheduler` (default: a local cluster)")
        parser.add_argument("--dask_workers", type=int, default=2,
                            help="worker processes of the local cluster when no address is given")
        parser.add_argument("--dask_npartitions", type=int, default=None,
                            help=f"partitions of each created collection (default {PARTITIONS_PER_WORKER} per worker)")
        parser.add_argument("--dask_connection_timeout", type=float, default=10.0,
                            help="seconds to wait for the scheduler")
        parser.add_argument("--dask_traffic_json", default=None,
                            help="after the job, write per worker the tasks run and the outputs fetched "
                                 "from other workers (count, bytes) to this JSON file")


# -- helpers of the translation -----------------------------------------------------------------
def _flatten(bags: list, npartitions: int):
    """The union of bags. Bags cut into the same number of partitions are zipped: partition i of the
    union joins partition i of each (a pipeline's branches split from one collection, such as the
    rows kept and the rows dropped, keep their partitions where they were computed, so nothing
    moves between workers and each partition holds its share of both). Otherwise the partitions
    are concatenated and merged back to `npartitions` (neighbours merge, which can move data)."""
    import dask.bag as db

    if not bags:
        return db.from_sequence([], npartitions=1)
    if len(bags) == 1:
        return bags[0]
    if len({b.npartitions for b in bags}) == 1:
        return db.map_partitions(concat_parts, *bags)
    bag = db.concat(bags)
    return bag.repartition(npartitions) if bag.npartitions > npartitions else bag


def _minus(after: dict, before: dict | None) -> dict:
    """This job's share of a long-lived worker's counters (they count from the worker's start)."""
    if not before:
        return after
    fetched = {}
    for k, (n, b) in after["fetched"].items():
        n0, b0 = before["fetched"].get(k, (0, 0))
        if n > n0:
            fetched[k] = (n - n0, b - b0)
    return {"executed": after["executed"] - before["executed"], "fetched": fetched}


# -- translation -------------------------------------------------------------------------------
class _Translate(PipelineVisitor):
    """Primitive transforms -> dask bags, keyed by the PCollection each one produces."""

    def __init__(self, npartitions: int):
        self.npartitions = npartitions
        self.bags: dict[Any, Any] = {}  # PCollection -> dask bag
        self.consumed: set = set()
        self.modules: set[str] = set()
        self.paths: set[str] = set()
        self.file_users: list = []  # functions with file_paths(): local files their workers open
        self.reshuffled: set = set()  # bags a Reshuffle produced: what reads them fans out
        self.lifting = None  # the CombinePerKey being translated whole (its parts are skipped)

    def enter_composite_transform(self, node) -> None:
        import apache_beam as beam
        from apache_beam.internal import pickler

        t = node.transform
        if self.lifting is not None or type(t) is not beam.CombinePerKey or t.args or t.kwargs:
            return
        self.lifting = node
        self._declared(t.fn)
        spec = pickler.dumps(t.fn)
        (bag,) = self._input(node)
        partials = bag.map_partitions(partial_combine, spec)
        if node.parent is not None and isinstance(node.parent.transform, beam.CombineGlobally):
            # one key: the partitions' accumulators meet in one task, without a shuffle's
            # npartitions x npartitions split, group and join tasks and their transfers
            out = partials.repartition(1).map_partitions(merge_partials, spec)
        else:
            out = (partials.groupby(by_key, shuffle="tasks", npartitions=self.npartitions)
                   .map_partitions(final_combine, spec))
        for pc in node.outputs.values():
            self.bags[pc] = out

    def leave_composite_transform(self, node) -> None:
        if node is self.lifting:
            self.lifting = None

    def _input(self, node):
        mains = [v for v in node.inputs if not isinstance(v, pvalue.PBegin)]
        for v in mains:
            self.consumed.add(v)
        return [self.bags[v] for v in mains]

    def visit_transform(self, node) -> None:
        import apache_beam as beam
        from apache_beam.runners.dask.overrides import _Create, _Flatten, _Read, _Reshuffle

        if self.lifting is not None:
            return
        t = node.transform
        ins = self._input(node)
        outs = list(node.outputs.items())
        for _, pc in outs:
            windowing = getattr(pc, "windowing", None)
            if windowing is not None and not windowing.is_default():
                raise CidermillError(f"--runner dask runs batch pipelines in the global window; "
                                     f"{node.full_label} uses {windowing.windowfn!r}")
        if isinstance(t, _Create):
            bag = _even_bag(list(t.values), self.npartitions)
        elif isinstance(t, _Reshuffle):
            bag = ins[0]
            self.reshuffled.add(bag.name)
        elif isinstance(t, _Flatten):
            bag = _flatten(ins, self.npartitions)
        elif isinstance(t, _GroupByKeyOnly):
            bag = (ins[0].groupby(by_key, shuffle="tasks", npartitions=self.npartitions).map_partitions(grouped))
        elif isinstance(t, beam.ParDo):
            bag = self._pardo(node, t, ins[0])
            if ins[0].name in self.reshuffled and bag.npartitions < self.npartitions:
                # Create(shard ids) | Reshuffle | Read: a few work items expand into many rows;
                # spread the rows so the steps fused after the read use every worker
                bag = bag.repartition(self.npartitions)
        elif isinstance(t, _Read):
            raise CidermillError(f"--runner dask cannot run Beam sources yet ({node.full_label}); "
                                 "read inside a DoFn instead")
        else:
            raise CidermillError(f"--runner dask has no translation for {type(t).__name__} ({node.full_label})")
        if isinstance(t, beam.ParDo) and len(outs) > 1:
            for tag, pc in outs:
                self.bags[pc] = bag.map_partitions(pick_tag, None if tag in (None, "None") else tag)
        else:
            for _, pc in outs:
                self.bags[pc] = bag.map_partitions(pick_tag, None) if isinstance(t, beam.ParDo) else bag

    def _pardo(self, node, t, bag):
        import dask
        from apache_beam.internal import pickler
        from apache_beam.internal import util

        args, kwargs, _ = util.remove_objects_from_args(t.args, t.kwargs, pvalue.AsSideInput)
        fn = t.fn
        inner = getattr(fn, "_fn", None)
        for obj in (fn, inner):
            mod = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None)
            if mod and mod != "__main__":
                self.modules.add(mod.split(".")[0])
            self._declared(obj)
        spec = pickler.dumps((fn, args, kwargs, node.full_label))
        side_specs, side_values = [], []
        for si in node.side_inputs:
            self.consumed.add(si.pvalue)
            side_specs.append((type(si), si._view_options()))
            side_values.append(dask.delayed(concat_parts)(*self.bags[si.pvalue].to_delayed(optimize_graph=False)))
        return bag.map_partitions(run_bundle, spec, side_specs, *side_values, token=_task_name(node.full_label))

    def _declared(self, obj) -> None:
        """What a function declares its workers use locally (runners/dask_client.py's docstring)."""
        if callable(getattr(obj, "dataset_paths", None)):  # local datasets its workers read or write
            self.paths.update(obj.dataset_paths())
        if callable(getattr(obj, "file_paths", None)):  # local files its workers open
            self.file_users.append(obj)

    def leaves(self) -> list:
        return [b.map_partitions(count_items) for pc, b in self.bags.items() if pc not in self.consumed]


def _task_name(label: str) -> str:
    """A Beam step's label as a Dask task-name prefix (what the dashboard and task stream show)."""
    return "beam:" + re.sub(r"[^A-Za-z0-9_/]+", "_", label)[-60:]


def _even_bag(items: list, npartitions: int):
    """A bag of `items` in min(len(items), npartitions) partitions whose sizes differ by one at
    most. `db.from_sequence` cuts more than 100 items into partitions of floor(len / npartitions),
    which leaves a sliver: 194 read items and 8 partitions made 8 of 24 and a ninth of 2, so two
    workers ran 5 and 4 partitions and one idled at the end."""
    from dask.bag.core import Bag
    from dask.base import tokenize

    n = max(1, min(len(items), npartitions))
    size, extra = divmod(len(items), n)
    bounds = [i * size + min(i, extra) for i in range(n + 1)]
    name = f"from_sequence-{tokenize(items, n)}"
    return Bag({(name, i): items[bounds[i]:bounds[i + 1]] for i in range(n)}, name, n)


# GroupByKey straight to one shuffle (no window reification: the global window only)
import apache_beam as _beam  # noqa: E402


class _GroupByKeyOnly(_beam.PTransform):
    def expand(self, pcoll):
        return pvalue.PCollection.from_(pcoll)


def _overrides() -> list:
    from apache_beam.pipeline import PTransformOverride
    from apache_beam.runners.dask.overrides import dask_overrides

    class GroupByKeyOverride(PTransformOverride):
        def matches(self, applied) -> bool:
            return applied.transform.__class__ == _beam.GroupByKey

        def get_replacement_transform_for_applied_ptransform(self, applied):
            return _GroupByKeyOnly()

    upstream = [o for o in dask_overrides() if type(o).__name__ != "GroupByKeyOverride"]
    return [GroupByKeyOverride()] + upstream


# -- running -----------------------------------------------------------------------------------
class DaskResult(PipelineResult):
    def __init__(self, client, cluster, futures, traffic_json: str | None = None, before: dict | None = None):
        super().__init__(PipelineState.RUNNING)
        self.traffic_json, self.before = traffic_json, before or {}
        self.client, self.cluster, self.futures = client, cluster, futures
        self.traffic: dict = {}  # worker -> tasks run and outputs fetched (after the job)

    def wait_until_finish(self, duration=None):
        try:
            self.client.gather(self.futures, errors="raise")
            self._state = PipelineState.DONE
            self.traffic = self._log_traffic() if self.traffic_json else {}
        except Exception as e:
            self._state = PipelineState.FAILED
            if isinstance(e, CidermillError):
                raise
            if isinstance(e, (ModuleNotFoundError, ImportError)):
                raise CidermillError(f"a Dask worker cannot import {getattr(e, 'name', None) or e}; install "
                                     "cidermill and its dependencies on every worker") from None
            raise
        finally:
            self.close()
        return self._state

    def _log_traffic(self) -> dict:
        """Per worker: tasks run and task outputs fetched from other workers (logged at INFO)."""
        try:
            traffic = {w: _minus(t, self.before.get(w)) for w, t in self.client.run(worker_traffic).items()}
        except Exception:  # noqa: BLE001  (a diagnostic: a worker gone after the job is no error)
            return {}
        for worker, t in sorted(traffic.items()):
            moved = sum(b for _, b in t["fetched"].values())
            top = sorted(t["fetched"].items(), key=lambda kv: -kv[1][1])[:3]
            log.info("dask worker %s: %d tasks run, %d outputs fetched from other workers (%.1f MB)%s",
                     worker, t["executed"], sum(n for n, _ in t["fetched"].values()), moved / 1e6,
                     "; most: " + ", ".join(f"{k} {b / 1e6:.1f} MB" for k, (_, b) in top) if top else "")
        import json  # noqa: PLC0415
        with open(self.traffic_json, "w", encoding="utf-8") as f:  # only called with --dask_traffic_json
            json.dump(traffic, f, indent=1, sort_keys=True)
        return traffic

    def close(self) -> None:
        """Let go of the job's results; close its client (and a cluster it started), except the
        process's kept local cluster (runners/dask_client.py), which stays up for the next job
        unless this one did not finish."""
        from pipelines.runners.dask_client import let_go  # noqa: PLC0415

        if self.client is None:
            return
        self.futures = []
        let_go(self.client, self.cluster, failed=self._state != PipelineState.DONE)
        self.client = self.cluster = None

    def cancel(self):
        self.client.cancel(self.futures)
        self._state = PipelineState.CANCELLED
        self.close()
        return self._state


class DaskRunner(PipelineRunner):
    """Executes a batch Beam pipeline on a Dask cluster (see the module docstring)."""

    def run_pipeline(self, pipeline, options):
        from pipelines.runners.dask_client import check_files, check_paths, check_workers, connect, let_go

        opts = options.view_as(CidermillDaskOptions)
        pipeline.replace_all(_overrides())
        client, cluster = connect(opts.dask_client_address, opts.dask_workers, opts.dask_connection_timeout)
        try:
            n_workers = len(client.scheduler_info().get("workers", {})) or opts.dask_workers
            visitor = _Translate(opts.dask_npartitions or PARTITIONS_PER_WORKER * max(1, n_workers))
            pipeline.visit(visitor)
            check_workers(client, visitor.modules)
            check_paths(client, visitor.paths)
            check_files(client, visitor.file_users)
            before = client.run(worker_traffic) if opts.dask_traffic_json else None
            futures = client.compute(visitor.leaves())
        except BaseException:
            let_go(client, cluster, failed=True)
            raise
        return DaskResult(client, cluster, futures, opts.dask_traffic_json, before)
