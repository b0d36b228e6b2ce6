"""Getting a Dask client for a Beam job: an existing scheduler or a local cluster, checked first.

A job should fail before it starts, in one line, when the scheduler cannot be reached or a worker
cannot import what the job's functions need; otherwise the same mistake surfaces later as a
pickling traceback from inside a worker.
"""
from __future__ import annotations

import importlib
import logging
from typing import Iterable

from corpus.errors import CidermillError

# what every task unpickles, whatever the pipeline
BASE_MODULES = ("apache_beam", "pyarrow", "xxhash", "corpus", "pipelines")


def _probe_imports(modules: list[str]) -> str | None:
    """Runs on a worker: the first module it cannot import, as 'name (reason)', else None."""
    for m in modules:
        try:
            importlib.import_module(m)
        except Exception as e:  # noqa: BLE001  (any import failure is the answer)
            return f"{m} ({type(e).__name__}: {e})"
    return None


def connect(address: str | None, n_workers: int, timeout_s: float = 10.0):
    """-> (client, cluster or None). `address` 'HOST:PORT' or 'tcp://HOST:PORT'; else a local
    cluster of `n_workers` processes with one thread each (Python code holds the GIL)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise CidermillError("--runner dask needs dask.distributed: pip install 'dask[distributed]'") from None
    logging.getLogger("distributed").setLevel(logging.WARNING)
    if address:
        addr = address if "://" in address else f"tcp://{address}"
        try:
            return Client(addr, timeout=timeout_s, set_as_default=False), None
        except (OSError, TimeoutError) as e:
            raise CidermillError(f"cannot reach the Dask scheduler at {addr} within {timeout_s:.0f}s "
                                 f"({type(e).__name__}); is `dask scheduler` running there?") from None
    if n_workers < 1:
        raise CidermillError(f"--dask_workers must be at least 1 (got {n_workers})")
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=40)
    return Client(cluster, set_as_default=False), cluster


def check_workers(client, modules: Iterable[str], wait_s: float = 30.0) -> int:
    """Wait for a worker, then make sure every worker imports `modules`; returns the worker count."""
    try:
        client.wait_for_workers(1, timeout=wait_s)
    except (TimeoutError, OSError):
        raise CidermillError(f"the Dask scheduler at {client.scheduler.address} has no workers "
                             f"(waited {wait_s:.0f}s); start some with `dask worker ADDRESS`") from None
    wanted = sorted(set(BASE_MODULES) | set(modules))
    answers = client.run(_probe_imports, wanted)
    for worker, missing in sorted(answers.items()):
        if missing:
            raise CidermillError(f"Dask worker {worker} cannot import {missing}; install cidermill and its "
                                 "dependencies on every worker (same versions as here)")
    return len(answers)
