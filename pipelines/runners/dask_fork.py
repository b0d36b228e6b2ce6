"""Local Dask workers forked from one process that has already imported what their tasks need.

Dask's nanny starts each worker as a fresh interpreter (multiprocessing's `spawn`), which then
imports distributed, Beam, pyarrow, numpy and the job's modules: about 1.5 CPU-s a worker, paid
while the driver imports Beam and builds the job. On a 2-core machine with two workers that start
is three interpreters importing at once. With multiprocessing's `forkserver`, one server process
imports them once and every worker is a fork of it, already holding them; the pages stay shared
until written.

Two things must stay as with `spawn`:
- **Hash seed.** Dask shuffles partition keys by `hash()`, so every worker, and a worker the
  nanny restarts later, must use the same seed. The nanny puts `PYTHONHASHSEED` into this process's
  environment before it starts a worker; the server, started by that first start, inherits it.
  A server that was already running (another part of this process started one without it) could
  carry another seed: `same_hash_seed` compares the workers' hashes with a fresh interpreter's,
  and the caller then starts the cluster again with `spawn`.
- **Memory settings.** The nanny's other pre-spawn variables (`MALLOC_TRIM_THRESHOLD_`) and
  `MALLOC_ARENA_MAX` (pipelines/malloc_arenas.py) reach the server the same way, and a fork keeps
  the allocator as the server set it up.

The server is stopped with the local clusters (`stop_server`), so that the workers' CPU is
accounted to this process (a parent that waits for it) and no server outlives the command; a
server that other code of the process started is left running.
"""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from collections.abc import Iterable

# what every worker imports, whatever the job (the runner's tasks, the shard writer, numpy)
PRELOAD = ("distributed", "apache_beam", "pyarrow", "numpy", "xxhash", "corpus", "pipelines",
           "pipelines.runners.dask_tasks", "pipelines.shards_io")


def prepare_server(modules: Iterable[str] = ()) -> bool:
    """Have the next forkserver this process starts import PRELOAD and `modules` (a job's own,
    e.g. pipelines.text_pipeline). -> False where forkserver is not available (the caller keeps
    `spawn`). A module that fails to import there is skipped; the worker imports it, or reports
    it, as before."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    try:
        from distributed import utils as dask_utils
    except ImportError:
        return False
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(dict.fromkeys([*PRELOAD, *modules])))
    # distributed sets its own list the first time it makes a forkserver context, importing
    # pandas and others here to build it; this flag tells it a list is set
    dask_utils._forkserver_preload_set = True
    return True


def start_method(forked: bool) -> dict:
    """The dask config under which a LocalCluster's nannies start their workers."""
    return {"distributed.worker.multiprocessing-method": "forkserver" if forked else "spawn"}


def _hash_probe() -> int:
    return hash("cidermill-hash-probe")


def same_hash_seed(client) -> bool:
    """Whether every worker hashes strings as a fresh interpreter under the seed the nanny set in
    this process's environment does (a worker it restarts is one). The workers' environment
    cannot tell: the nanny writes the variable into it after the fork."""
    seed = os.environ.get("PYTHONHASHSEED")
    if seed is None:
        return False
    env = {"PYTHONHASHSEED": seed, "PATH": os.environ.get("PATH", "")}
    fresh = subprocess.run([sys.executable, "-S", "-c", "print(hash('cidermill-hash-probe'))"], env=env,
                           capture_output=True, text=True, timeout=60, check=False)
    if fresh.returncode != 0:
        return False
    return all(h == int(fresh.stdout) for h in client.run(_hash_probe).values())


def _server():
    from multiprocessing import forkserver

    return getattr(forkserver, "_forkserver", None)


def server_pid(server=None) -> int | None:
    """The pid of this process's forkserver, None when none runs (or the stdlib's internals moved)."""
    return getattr(server or _server(), "_forkserver_pid", None)


def stop_server(started_by_us: set[int] | None = None) -> None:
    """Stop this process's forkserver and wait for it: its exit reaps the workers forked from it,
    so their CPU counts in this process's children. With `started_by_us`, only a server whose pid
    is in it: one that other code of this process started may still serve its own pool. The next
    cluster starts a new one (with that job's modules)."""
    server = _server()
    pid, stop = server_pid(server), getattr(server, "_stop", None)
    if stop is not None and pid is not None and (started_by_us is None or pid in started_by_us):
        stop()
