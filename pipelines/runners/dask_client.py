"""Getting a Dask client for a Beam job: an existing scheduler or a local cluster, checked first.

A job should fail before it starts, in one line, when the scheduler cannot be reached, a worker
cannot import what the job's functions need, a worker does not see a local dataset path as the
driver does, or a worker lacks (or holds other bytes at) a local file the job's functions open
there (a model, a checkpoint, a WARC file); otherwise the first two surface later as a pickling
traceback from inside a worker, the third as shards written to another machine's disk, and the
last as an obscure error in the middle of the job, or a job run with another model of the same name.

What the runner asks of a job's functions (DoFns, CombineFns), both optional:
  dataset_paths() -> [dir]   local dataset directories its workers read or write (check_paths);
  file_paths() -> [file]     local files its workers open (check_files). It must name them without
                             opening them: it is called here and again on every worker, so a default
                             that a worker resolves from its own installed packages (the shipped
                             quality and language-ID models) is checked where that worker loads it.
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import logging
import os
import threading
import uuid
from typing import Iterable

from corpus import objectstore
from corpus.errors import CidermillError
from corpus.manifest import MANIFEST_NAME
from pipelines.runners import dask_fork

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


# One local cluster per worker count and process, started by the first job that asks for it and
# kept for the jobs after it: a crawl runs one Beam pipeline per wave, and a cluster started per
# wave paid each time for its worker processes' start and imports (Beam, pyarrow, the job's
# modules: about 2.5 CPU-s a worker) and lost the models its DoFns had set up. Closed at exit.
_LOCAL: dict[int, tuple] = {}
_STARTING: dict[int, threading.Thread] = {}  # worker count -> the thread starting that cluster early
_EXIT_HOOK: list = []
_OUR_SERVERS: set[int] = set()  # forkservers our local clusters started (dask_fork.stop_server)


def connect(address: str | None, n_workers: int, timeout_s: float = 10.0):
    """-> (client, cluster or None). `address` 'HOST:PORT' or 'tcp://HOST:PORT'; else the local
    cluster of `n_workers` processes with one thread each (Python code holds the GIL), shared by
    the jobs of this process (is_shared)."""
    try:
        from dask.distributed import Client
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
    starting = _STARTING.pop(n_workers, None)
    if starting is not None:
        starting.join()
    return _local_cluster(n_workers)


def _local_cluster(n_workers: int, modules: Iterable[str] = ()):
    logging.getLogger("distributed").setLevel(logging.WARNING)
    cached = _LOCAL.get(n_workers)
    if cached is not None:
        if _running(*cached):
            return cached
        release(cached[1])
    forked = dask_fork.prepare_server(modules)
    running = dask_fork.server_pid()
    client, cluster = _start_local(n_workers, forked)
    started = dask_fork.server_pid() if forked and running is None else None
    if started is not None:
        _OUR_SERVERS.add(started)
    if forked and not dask_fork.same_hash_seed(client):  # a forkserver started elsewhere, another seed
        client.close()
        cluster.close()
        client, cluster = _start_local(n_workers, forked=False)
    if not _EXIT_HOOK:  # registered after distributed's own exit handlers, so it runs before them
        _EXIT_HOOK.append(atexit.register(close_local_clusters))
    _LOCAL[n_workers] = (client, cluster)
    return _LOCAL[n_workers]


# A local cluster has no dashboard, so nothing reads the statistical profile each worker samples
# every 10 ms; taking the GIL for it cost a worker about a tenth of its CPU (A/B of 2026-12-07 in
# the README: the 12,000-document text chain 44.5 to 40.2 s on one worker and 23.4 to 20.6 s on two).
# Given to each nanny, which sets it in its worker and in one it restarts (the nanny merges only
# the top level into this process's config, so the whole config goes, with this key changed).
LOCAL_WORKER_CONFIG = {"distributed": {"worker": {"profile": {"enabled": False}}}}


def _start_local(n_workers: int, forked: bool):
    """A LocalCluster of `n_workers` one-thread processes, forked from the preloaded server
    (runners/dask_fork.py) or spawned; a worker the nanny restarts later is spawned."""
    import dask
    from dask.distributed import Client, LocalCluster

    with dask.config.set(dask_fork.start_method(forked)):
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40,
                               config=dask.config.merge(dask.config.config, LOCAL_WORKER_CONFIG))
    return Client(cluster, set_as_default=False), cluster


def start_local_early(n_workers: int, modules: Iterable[str] = ()) -> bool:
    """Start the local cluster of `n_workers` in a thread now, so that its worker processes start
    and import what every task unpickles (BASE_MODULES, and the job's `modules`, which the
    forkserver that the workers fork from imports once: runners/dask_fork.py) while this process
    imports Beam and builds the pipeline; the job's connect() then takes it. Errors surface
    there, not here. -> whether it started one (not when one is up or starting)."""
    if n_workers < 1 or n_workers in _LOCAL or n_workers in _STARTING:
        return False

    def start() -> None:
        with contextlib.suppress(Exception):  # connect() starts one again, and reports what fails
            client, _ = _local_cluster(n_workers, modules)
            client.run(_probe_imports, list(BASE_MODULES))

    t = _STARTING[n_workers] = threading.Thread(target=start, name="cidermill-dask-start", daemon=True)
    t.start()
    return True


def _running(client, cluster) -> bool:
    return getattr(client, "status", None) == "running" and str(getattr(cluster, "status", "")).endswith("running")


def is_shared(cluster) -> bool:
    """Whether `cluster` is this process's kept local cluster (a job leaves it running)."""
    return cluster is not None and any(c is cluster for _, c in _LOCAL.values())


def let_go(client, cluster, failed: bool) -> None:
    """A job is over: close its client and a cluster it started, but leave the kept local cluster
    up for the next job, unless this one failed (release)."""
    if is_shared(cluster):
        if failed:
            release(cluster)
        return
    client.close()
    if cluster is not None:
        cluster.close()


def release(cluster) -> None:
    """Close a kept local cluster and forget it: after a job on it failed, the next job starts a
    fresh one rather than inherit a worker in an unknown state."""
    for n, (client, c) in list(_LOCAL.items()):
        if c is cluster:
            del _LOCAL[n]
            with contextlib.suppress(Exception):
                client.close()
                c.close()


def close_local_clusters() -> None:
    for n in list(_STARTING):  # a cluster still starting (a job that failed before it connected)
        _STARTING.pop(n).join(timeout=60)
    for _, cluster in list(_LOCAL.values()):
        release(cluster)
    dask_fork.stop_server(_OUR_SERVERS)
    _OUR_SERVERS.clear()


def _witness(path: str) -> tuple[str, str, bool] | None:
    """A file under `path` (or its nearest existing parent) whose bytes a worker that sees the same
    directory reads back: a fresh marker where this process can write, else the dataset's manifest.
    -> (file, sha256 of its bytes, whether to remove it afterwards), or None when there is nothing."""
    d = os.path.abspath(path)
    while not os.path.isdir(d) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    token = uuid.uuid4().hex
    marker = os.path.join(d, f".cidermill-visible-{token}")
    try:
        with open(marker, "w", encoding="ascii") as f:
            f.write(token)
        return marker, hashlib.sha256(token.encode()).hexdigest(), True
    except OSError:
        mf = os.path.join(path, MANIFEST_NAME)
        if os.path.isfile(mf):
            with open(mf, "rb") as f:
                return mf, hashlib.sha256(f.read()).hexdigest(), False
    return None


def _unseen(witnesses: list[tuple[str, str, str]]) -> list[str]:
    """Runs on a worker: the paths whose witness file it cannot read, or reads other bytes from."""
    missing = []
    for path, file, sha in witnesses:
        try:
            with open(file, "rb") as f:
                same = hashlib.sha256(f.read()).hexdigest() == sha
        except OSError:
            same = False
        if not same:
            missing.append(path)
    return missing


def check_paths(client, paths: Iterable[str]) -> None:
    """Every local dataset path the job's workers read or write must be the same directory on every
    worker (one machine, or a filesystem they all mount): a worker on another machine would write
    shards to its own disk, and the job's output would silently lack them. s3:// paths are skipped."""
    local = sorted(p for p in set(paths) if p and not objectstore.is_remote(p))
    witnesses, cleanup = [], []
    try:
        for p in local:
            w = _witness(p)
            if w is not None:
                witnesses.append((p, w[0], w[1]))
                if w[2]:
                    cleanup.append(w[0])
        answers = client.run(_unseen, witnesses) if witnesses else {}
    finally:
        for f in cleanup:
            with contextlib.suppress(OSError):
                os.remove(f)
    for worker, missing in sorted(answers.items()):
        if missing:
            raise CidermillError(f"Dask worker {worker} does not see {missing[0]} as this machine does (another "
                                 "machine's disk?): give an s3:// path, or a directory on a filesystem every "
                                 "worker mounts at the same path")


# Bytes of a file that its digest covers: the first and the last MiB (all of it up to 2 MiB), and its
# size. A whole-file sha256 would read every byte on the driver and again in every worker process
# (a CLIP checkpoint is hundreds of MB, the images job's WARC inputs can be many GB, and a machine
# runs one worker per core) before any work starts; the check is there to catch a missing file or
# another file at the same path (another model build, another crawl's WARC), whose size, header or
# leading weights differ; two files that differ only in their middle bytes are not told apart.
DIGEST_SPAN = 1 << 20


def file_digest(path: str) -> str:
    """'SIZE sha256' of a file's size and its first and last DIGEST_SPAN bytes (see above)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        h = hashlib.sha256(f.read(DIGEST_SPAN))
        if size > DIGEST_SPAN:
            f.seek(max(DIGEST_SPAN, size - DIGEST_SPAN))
            h.update(f.read(DIGEST_SPAN))
    return f"{size} {h.hexdigest()}"


def _file_digests(users: list) -> list:
    """Runs on a worker, and here: for each function, [(path, digest or None when unreadable)] of the
    local files its file_paths() names, resolved in this process; a string when that call failed."""
    out: list = []
    seen: dict[str, str | None] = {}
    for fn in users:
        try:
            paths = [p for p in fn.file_paths() if p and not objectstore.is_remote(p)]
        except Exception as e:  # noqa: BLE001  (e.g. a default model's package missing on a worker)
            out.append(f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}")
            continue
        for p in paths:
            if p not in seen:
                try:
                    seen[p] = file_digest(p)
                except OSError:
                    seen[p] = None
        out.append([(p, seen[p]) for p in paths])
    return out


def check_files(client, users: list) -> None:
    """Every local file the job's functions open on the workers (their file_paths(), see the module
    docstring) must hold the same bytes on every worker as here: same size, same sha256 of its first
    and last MiB (DIGEST_SPAN). s3:// paths are skipped (every worker reads the same object); files
    this process cannot read are skipped (the job's own checks on this machine report those)."""
    if not users:
        return
    here = _file_digests(users)
    answers = client.run(_file_digests, users)
    hint = "put the same file at the same path on every worker, or on a filesystem every worker mounts"
    for worker, there in sorted(answers.items()):
        for fn, mine, theirs in zip(users, here, there):
            if isinstance(mine, str):
                continue
            if isinstance(theirs, str) or len(theirs) != len(mine):
                raise CidermillError(f"Dask worker {worker} cannot name the files {type(fn).__name__} opens "
                                     f"({theirs if isinstance(theirs, str) else 'another list'}); install the "
                                     "same cidermill and dependencies on every worker")
            for (path, digest), (wpath, wdigest) in zip(mine, theirs):
                if digest is None or wdigest == digest:
                    continue
                where = path if wpath == path else f"{wpath} (here: {path})"
                if wdigest is None:
                    raise CidermillError(f"Dask worker {worker} cannot read {where}, a file the job opens on "
                                         f"its workers: {hint}")
                raise CidermillError(f"Dask worker {worker} has other bytes at {where} than this machine "
                                     f"({wdigest.split()[0]} bytes there, {digest.split()[0]} here): {hint}")


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
