"""What runs inside a Dask task of a Beam job (pipelines/runners/dask_runner.py translates the
pipeline into tasks that call these): a Beam bundle per partition with its DoFn set up once per
worker, a tagged output picked, a shuffled group, a combine's partial and final steps, and the
per-worker traffic counters. Workers import this module by name when they unpickle a task.
"""
from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict

log = logging.getLogger(__name__)


def _receiver_base():
    from apache_beam.runners.common import Receiver
    return Receiver


class _Collect(_receiver_base()):
    """A Receiver: appends (tag, value) for every output the DoFn emits."""

    def __init__(self, tag, out: list):
        self.tag, self.out = tag, out

    def receive(self, windowed_value):
        self.out.append((self.tag, windowed_value.value))


class _Receivers(dict):
    def __init__(self, out: list):
        super().__init__()
        self.out = out

    def __missing__(self, tag):
        r = self[tag] = _Collect(tag, self.out)
        return r


def concat_parts(*parts) -> list:
    return [x for part in parts for x in part]


# per worker process: DoFns already set up, by spec digest, reused across bundles as Beam allows
# (a model a DoFn loads in setup() loads once per worker, not once per partition)
# (a plain `dask worker` runs several threads: _IDLE_LOCK keeps two bundles from taking one invoker)
_IDLE: "OrderedDict[str, list]" = OrderedDict()
_IDLE_LOCK = threading.Lock()
_KEEP = 16


def _windowing():
    """(WindowedValue, the global window's timestamp, windows) for wrapping elements as Beam does.

    GlobalWindows.windowed_value(v) equals WindowedValue(v, MIN_TIMESTAMP, (GlobalWindow(),)), but
    each GlobalWindow() runs __init__, which re-reads the window's end from a proto constant: 2 us
    an element against 0.3 us with the windows tuple built once."""
    from apache_beam.transforms.window import GlobalWindow
    from apache_beam.utils.timestamp import MIN_TIMESTAMP
    from apache_beam.utils.windowed_value import WindowedValue
    return WindowedValue, MIN_TIMESTAMP, (GlobalWindow(),)


def _new_invoker(spec: bytes, side_specs: list, side_values: tuple):
    from apache_beam import DoFn
    from apache_beam.internal import pickler
    from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, _OutputHandler
    from apache_beam.transforms.sideinputs import SideInputMap

    fn, args, kwargs, label = pickler.loads(spec)
    out: list = []
    receivers = _Receivers(out)
    handler = _OutputHandler(window_fn=None, main_receivers=receivers[None], tagged_receivers=receivers,
                             per_element_output_counter=None, output_batch_converter=None,
                             process_yields_batches=False, process_batch_yields_elements=False)
    windowed, start, windows = _windowing()
    sides = [SideInputMap(view_cls, view_options, [windowed(v, start, windows) for v in values])
             for (view_cls, view_options), values in zip(side_specs, side_values)]
    invoker = DoFnInvoker.create_invoker(
        DoFnSignature(fn), handler, context=DoFnContext(label, state=None), side_inputs=sides,
        input_args=args, input_kwargs=kwargs, user_state_context=None,
        bundle_finalizer_param=DoFn.BundleFinalizerParam())
    invoker.invoke_setup()
    return invoker, out


def _retire(entry) -> None:
    try:
        entry[0].invoke_teardown()
    except Exception:  # noqa: BLE001  (teardown is best effort, as in Beam)
        log.warning("DoFn teardown failed", exc_info=True)


def run_bundle(items, spec: bytes, side_specs: list, *side_values) -> list:
    """One dask partition = one Beam bundle: start, every element, finish.

    `spec` is the Beam-pickled (DoFn, args, kwargs, label). A DoFn without side inputs is set up
    once per worker process and reused for later bundles of the same step; one with side inputs
    (concrete lists here, computed by the scheduler before this task) is built for the bundle."""
    windowed, start, windows = _windowing()
    key = None if side_specs else hashlib.sha1(spec).hexdigest()
    entry = None
    if key:
        with _IDLE_LOCK:
            idle = _IDLE.get(key)
            entry = idle.pop() if idle else None
    if entry is None:
        entry = _new_invoker(spec, side_specs, side_values)
    invoker, out = entry
    out.clear()
    try:
        invoker.invoke_start_bundle()
        for item in items:
            invoker.invoke_process(windowed(item, start, windows))
        invoker.invoke_finish_bundle()
    except BaseException:
        _retire(entry)
        raise
    result = list(out)
    out.clear()
    if key is None:
        _retire(entry)
    else:
        with _IDLE_LOCK:
            _IDLE.setdefault(key, []).append(entry)
            _IDLE.move_to_end(key)
            evicted = [old for _ in range(len(_IDLE) - _KEEP) for old in _IDLE.popitem(last=False)[1]]
        for old in evicted:
            _retire(old)
    return result


def pick_tag(tagged: list, tag) -> list:
    return [v for t, v in tagged if t == tag]


def grouped(kvs) -> list:
    """One partition of an already shuffled bag of (key, values) groups -> (key, list) pairs."""
    return [(k, [v for _, v in group]) for k, group in kvs]


def by_key(kv):
    return kv[0]


def _combine_fn(spec: bytes):
    fn = _FNS.get(spec)
    if fn is None:
        from apache_beam.internal import pickler
        if len(_FNS) > 64:  # a long-lived worker serving many jobs
            _FNS.clear()
        fn = _FNS[spec] = pickler.loads(spec)
        fn.setup()
    return fn


_FNS: dict = {}  # per worker process: CombineFns by pickled bytes, set up once


def partial_combine(part, spec: bytes) -> list:
    """Combiner lifting: one accumulator per key per partition, so only those cross the shuffle."""
    fn = _combine_fn(spec)
    accs: dict = {}
    for k, v in part:
        accs[k] = fn.add_input(accs[k] if k in accs else fn.create_accumulator(), v)
    return [(k, fn.compact(a)) for k, a in accs.items()]


def final_combine(groups, spec: bytes) -> list:
    fn = _combine_fn(spec)
    return [(k, fn.extract_output(fn.merge_accumulators([a for _, a in group]))) for k, group in groups]


def merge_partials(part, spec: bytes) -> list:
    """The final combine of accumulators gathered into one partition (a global combine's one key),
    merged in partition order."""
    groups: dict = {}
    for kv in part:
        groups.setdefault(kv[0], []).append(kv)
    return final_combine(groups.items(), spec)


def count_items(part) -> int:
    return sum(1 for _ in part)


def worker_traffic(dask_worker) -> dict:
    """Runs on each worker after a job: tasks it ran, task outputs it fetched from other workers and
    their bytes (pickled sizes as Dask measures them), by task-name prefix. Rows that cross workers
    are pickled, sent and unpickled: the CPU a second worker adds beyond the job's own work."""
    by: dict = {}
    for entry in dask_worker.transfer_incoming_log:
        for key, nbytes in entry["keys"].items():
            name = key[0] if isinstance(key, tuple) else str(key)
            prefix = name.rsplit("-", 1)[0]
            n, b = by.get(prefix, (0, 0))
            by[prefix] = (n + 1, b + (nbytes or 0))
    return {"executed": dask_worker.state.executed_count, "fetched": by}
